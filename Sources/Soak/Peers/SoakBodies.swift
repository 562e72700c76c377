import NIOCore

/// The bodies soak messages carry: slices of two fixed pools, one of JSON-like text (deflates
/// well) and one of noise (does not), so that the receiver of any message can tell from its
/// session, number, length and pool exactly which bytes it must hold, without keeping a copy.
public struct SoakBodies: Sendable {
    public enum Pool: String, Sendable { case json = "j", noise = "n" }

    /// The largest body: pools are this much longer than the window offsets range over.
    public static let maxBodySize = 262_144
    static let spread = 1 << 20

    let json: ByteBuffer
    let noise: ByteBuffer

    public init(seed: UInt64) {
        var text = ""
        var index = 0
        var random = SoakRandom(seed: seed)
        while text.utf8.count < Self.spread + Self.maxBodySize {
            text += "{\"_id\":\"doc-\(index)\",\"type\":\"order\",\"qty\":\(random.next() % 97),\"channels\":[\"c\(index % 7)\"]},"
            index += 1
        }
        json = ByteBuffer(string: String(text.utf8.prefix(Self.spread + Self.maxBodySize))!)
        var noise = ByteBuffer()
        noise.reserveCapacity(Self.spread + Self.maxBodySize)
        while noise.readableBytes < Self.spread + Self.maxBodySize { noise.writeInteger(random.next()) }
        self.noise = noise
    }

    /// The body of message `number` of `session`: `length` bytes of `pool` (length at most
    /// ``maxBodySize``).
    public func body(session: UInt64, number: UInt64, length: Int, pool: Pool) -> ByteBuffer {
        let offset = Int(SoakRandom.mix(session &* 0x1_0000_0001 ^ number) % UInt64(Self.spread))
        return (pool == .json ? json : noise).getSlice(at: offset, length: min(length, Self.maxBodySize))!
    }
}
