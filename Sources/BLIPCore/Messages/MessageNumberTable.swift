/// A table keyed by message number: the per-direction tables every decoded message touches
/// (messages in progress, requests awaiting their reply), in the decoder, the relay and the
/// analyzer. A `Dictionary` hashes each key with a seeded SipHash; a round trip makes about ten
/// such lookups, a tenth of the relay's own work on small messages. Here a key is spread by one
/// multiplication (Fibonacci hashing: the top bits of `number × 2⁶⁴/φ`), and found by linear
/// probing in a power-of-two array that is never more than half full. Requests are numbered
/// upwards one by one (wire-format reference §4.4), so the keys a table holds are near each
/// other and land in distinct slots.
///
/// Limits: the table holds what its owner lets it (each owner bounds its table by a named limit,
/// e.g. ``BLIPLimits/maxAwaitedReplies``); it grows at half full and keeps its size until
/// ``removeAll()``. A peer that answered only the requests whose numbers collide would make
/// probes as long as the table's count, which that limit bounds.
///
/// Iteration order is unspecified, as a `Dictionary`'s.
public struct MessageNumberTable<Value>: Sequence {
    public typealias Element = (key: MessageNumber, value: Value)

    @usableFromInline var slots: ContiguousArray<Element?>
    /// `64 − log₂(capacity)`: the hash's top bits index the slots.
    @usableFromInline var shift: UInt64
    @usableFromInline var entries = 0

    /// Entries held.
    @inlinable public var count: Int { entries }

    /// The capacity of an empty table.
    @inlinable static var initialCapacity: Int { 16 }

    @inlinable public init() {
        slots = ContiguousArray(repeating: nil, count: Self.initialCapacity)
        shift = 64 - UInt64(Self.initialCapacity.trailingZeroBitCount)
    }

    @inlinable public var isEmpty: Bool { entries == 0 }

    @inlinable var mask: Int { slots.count - 1 }

    @inlinable @inline(__always) func home(of number: MessageNumber) -> Int {
        Int(truncatingIfNeeded: (number &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slot holding `number`, or nil.
    @inlinable @inline(__always) func slot(of number: MessageNumber) -> Int? {
        var index = home(of: number)
        while let entry = slots[index] {
            if entry.key == number { return index }
            index = (index &+ 1) & mask
        }
        return nil
    }

    @inlinable public func contains(_ number: MessageNumber) -> Bool { slot(of: number) != nil }

    @inlinable public subscript(number: MessageNumber) -> Value? {
        get { slot(of: number).map { slots[$0]!.value } }
        set {
            if let newValue { updateValue(newValue, forKey: number) } else { removeValue(forKey: number) }
        }
    }

    /// Stores `value` under `number`; returns the value it replaced, if any.
    @inlinable @discardableResult
    public mutating func updateValue(_ value: Value, forKey number: MessageNumber) -> Value? {
        var index = home(of: number)
        while let entry = slots[index] {
            if entry.key == number {
                slots[index] = (number, value)
                return entry.value
            }
            index = (index &+ 1) & mask
        }
        if 2 * (entries + 1) > slots.count {
            grow()
            return updateValue(value, forKey: number)
        }
        slots[index] = (number, value)
        entries += 1
        return nil
    }

    /// Removes `number`'s entry and returns its value. Later entries of the probe run move back
    /// into the gap (no tombstones), so lookups stay as short as the table is full.
    @inlinable @discardableResult
    public mutating func removeValue(forKey number: MessageNumber) -> Value? {
        guard var hole = slot(of: number) else { return nil }
        let removed = slots[hole]!.value
        slots[hole] = nil
        entries -= 1
        var next = (hole &+ 1) & mask
        while let entry = slots[next] {
            // The entry may fill the hole when the hole lies between its home slot and where it is.
            let home = home(of: entry.key)
            if (next &- home) & mask >= (next &- hole) & mask {
                slots[hole] = entry
                slots[next] = nil
                hole = next
            }
            next = (next &+ 1) & mask
        }
        return removed
    }

    /// Empties the table and gives back the memory it grew to.
    @inlinable public mutating func removeAll() {
        self = MessageNumberTable()
    }

    @inlinable mutating func grow() {
        let old = slots
        slots = ContiguousArray(repeating: nil, count: 2 * old.count)
        shift -= 1
        entries = 0
        for case let entry? in old { updateValue(entry.value, forKey: entry.key) }
    }

    @inlinable public func makeIterator() -> some IteratorProtocol<Element> {
        slots.lazy.compactMap { $0 }.makeIterator()
    }

    /// The values, in the table's order.
    @inlinable public var values: some Sequence<Value> { lazy.map(\.value) }
}

extension MessageNumberTable where Value == Void {
    /// Adds `number`; false if it was there already.
    @inlinable @discardableResult
    public mutating func insert(_ number: MessageNumber) -> Bool {
        updateValue((), forKey: number) == nil
    }

    /// Removes `number`; false if it was not there.
    @inlinable @discardableResult
    public mutating func remove(_ number: MessageNumber) -> Bool {
        removeValue(forKey: number) != nil
    }
}

extension MessageNumberTable: Sendable where Value: Sendable {}
