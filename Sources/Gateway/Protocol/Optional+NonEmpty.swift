extension Optional where Wrapped == String {
    /// The value, or nil when absent or empty: Sync Gateway reads BLIP properties from a Go map,
    /// where an empty value and a missing one are the same string, and LiteCore relies on that
    /// (e.g. setCheckpoint's empty `rev` for a new checkpoint).
    var nonEmpty: String? {
        guard let value = self, !value.isEmpty else { return nil }
        return value
    }
}
