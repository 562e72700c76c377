import NIOCore

extension JSONValue {
    /// Parses a message body with the strict parser the analyzer uses; nil when `buffer` is not
    /// one JSON document (or nests deeper than the parser allows).
    public init?(parsing buffer: ByteBuffer) {
        guard let value = try? JSONParser.parse(buffer) else { return nil }
        self = value
    }
}
