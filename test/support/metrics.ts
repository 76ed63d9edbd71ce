import { register } from 'prom-client'

/** A metric of this process as /metrics shows it, e.g. `metric('x_total', '{group="g"}')`; 0 until it moves. */
export async function metric(name: string, labels = ''): Promise<number> {
  const text = await register.metrics()
  const m = new RegExp(`^${name}${labels.replace(/[{}]/g, '\\$&')} (\\d+(?:\\.\\d+)?)$`, 'm').exec(text)
  return m ? Number(m[1]) : 0
}
