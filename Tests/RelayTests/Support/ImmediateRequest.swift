import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP request written by a blocking socket the moment it is connected, on a thread of its
/// own, and the answer's head read back: no event-loop hop between connect and write, so a loaded
/// machine cannot make a relay's client-header timer see a slow client.
enum ImmediateRequest {
    /// The response's status line and header lines; throws after `seconds` without them.
    static func send(_ request: String, port: Int, within seconds: Int = 30) async throws -> [String] {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try exchange(request, port: port, seconds: seconds) })
            }
        }
    }

    private static func exchange(_ request: String, port: Int, seconds: Int) throws -> [String] {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TimeoutError() }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TimeoutError() }
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ write(descriptor, $0.baseAddress!, $0.count) }) == bytes.count else { throw TimeoutError() }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") { return text[..<end.lowerBound].components(separatedBy: "\r\n") }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            guard count > 0 else { throw TimeoutError() }  // closed, or nothing within the bound
            received += buffer[0..<count]
        }
    }
}
