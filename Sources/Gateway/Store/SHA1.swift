import Crypto
import Foundation

/// SHA-1, which the protocol uses for attachment digests and proveAttachment proofs
/// (replication-protocol §3 "proveAttachment") and which this module also uses for revision-ID
/// digests (§4 allows MD5 or SHA-1). A thin streaming wrapper over swift-crypto's
/// `Insecure.SHA1`: not for security, only for the names the protocol mandates.
struct SHA1 {
    private var hasher = Insecure.SHA1()

    init() {}

    mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        hasher.update(data: Array(bytes))
    }

    mutating func update(_ buffer: UnsafeRawBufferPointer) { hasher.update(bufferPointer: buffer) }

    /// The 20-byte digest.
    mutating func finish() -> [UInt8] { Array(hasher.finalize()) }

    static func hash<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        Array(Insecure.SHA1.hash(data: Array(bytes)))
    }
}

extension Array where Element == UInt8 {
    var hexString: String {
        map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    var base64String: String { Data(self).base64EncodedString() }
}
