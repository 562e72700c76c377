import ReplicationNames

extension Properties {
    /// The value of the property `name`, or nil; setting replaces the first pair with that key or
    /// appends one. The string subscript with the name as ``PropertyName`` spells it: a raw value
    /// is a literal, so naming the property costs nothing over spelling it.
    public subscript(_ name: PropertyName) -> String? {
        get { self[name.rawValue] }
        set { self[name.rawValue] = newValue }
    }

    /// Properties from named pairs, in the order written: `Properties([.id: docID, .rev: revID])`.
    /// A name given twice is a precondition failure (a block with a duplicate key is invalid, §2.3).
    public init(_ pairs: KeyValuePairs<PropertyName, String>) {
        var seen: UInt64 = 0
        for (name, _) in pairs {
            let bit: UInt64 = 1 << name.code
            precondition(seen & bit == 0, "property \(name.rawValue) given twice")
            seen |= bit
        }
        self.init(pairs.map { ($0.key.rawValue, $0.value) })
    }
}
