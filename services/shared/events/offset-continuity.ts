/**
 * One membership's guard against committing past messages it never handled. A batch abandoned
 * in a rebalance (its partition briefly not assigned, so it is no longer alive) is left
 * uncommitted for redelivery; but the client's stream may still hold later messages of that
 * partition, read before the rebalance, or fetch on from where it was. Handling those and
 * committing them would move the group past the abandoned ones: they would never be read again.
 *
 * So each partition's next message must be at or before the first offset not yet committed by
 * this membership (earlier is a redelivery, which the handlers absorb); a later one is a gap, and
 * the membership must be made anew, to read again from the committed offsets.
 */
export interface OffsetContinuity {
  /**
   * Whether a batch of `partition` starting at `first` may be handled: false when it starts
   * after a message this membership read and did not commit.
   */
  accepts(partition: number, first: bigint): boolean
  /** `offset` of `partition` was committed: the next message to handle is the one after it. */
  committed(partition: number, offset: bigint): void
  /** The first offset of `partition` not yet committed by this membership, if it saw one. */
  expected(partition: number): bigint | undefined
}

export function offsetContinuity(): OffsetContinuity {
  // Per partition: the first offset not committed yet. Set by the first batch the membership
  // reads (its stream starts at the group's committed offset), then moved by each commit.
  const next = new Map<number, bigint>()
  return {
    accepts(partition, first) {
      const expected = next.get(partition)
      if (expected === undefined) {
        next.set(partition, first)
        return true
      }
      return first <= expected
    },
    committed(partition, offset) {
      const after = offset + 1n
      if (after > (next.get(partition) ?? -1n)) next.set(partition, after)
    },
    expected: (partition) => next.get(partition),
  }
}
