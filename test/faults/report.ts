/** Prints one line of figures of a fault, for the run's log (the assertions are in the tests). */
export function report(what: string, figures: Record<string, number>): void {
  const text = Object.entries(figures)
    .map(([k, v]) => `${k}: ${Number.isInteger(v) ? v : v.toFixed(1)}`)
    .join(', ')
  console.log(`[fault] ${what} — ${text}`)
}
