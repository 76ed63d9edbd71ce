import { Counter, Gauge, Histogram } from 'prom-client'

/**
 * The pipeline's metrics, each declared next to the code that moves it, in the default registry
 * that `/metrics` serves (the API's route, and the health port of a process without the API):
 * `counter(name, help)`, and after the help what else the metric takes (labelNames, buckets,
 * collect()). The label names type the labels its methods take, as prom-client's own classes do.
 */
function declaredBy<Configuration extends { name: string; help: string }, Metric>(
  Kind: new (configuration: Configuration) => Metric,
) {
  return (name: string, help: string, options?: Omit<Configuration, 'name' | 'help'>): Metric =>
    new Kind({ name, help, ...options } as Configuration)
}

export const counter = declaredBy(Counter)
export const gauge = declaredBy(Gauge)
export const histogram = declaredBy(Histogram)
