/// HTTP header fields in the order they were sent, names kept as written.
/// Lookups ignore case (RFC 9110 §5.1). Values are decoded as UTF-8, invalid bytes replaced.
public struct HTTPHeaderFields: Sendable, Hashable, Sequence {
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var fields: [Field]

    public init(_ fields: [Field] = []) { self.fields = fields }

    public init(_ pairs: KeyValuePairs<String, String>) {
        self.fields = pairs.map { Field(name: $0.key, value: $0.value) }
    }

    public mutating func append(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// The first value of `name`, if present.
    public subscript(name: String) -> String? {
        fields.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    /// The comma-separated elements of every `name` field, trimmed, e.g. for
    /// `Sec-WebSocket-Protocol: BLIP_3+CBMobile_4,BLIP_3+CBMobile_3`.
    public func listValues(for name: String) -> [String] {
        values(for: name).flatMap { $0.split(separator: ",") }
            .map { String($0.trimmingSpaces) }
            .filter { !$0.isEmpty }
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}
