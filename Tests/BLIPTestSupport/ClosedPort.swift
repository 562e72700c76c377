#if canImport(Glibc)
import Glibc
#endif

/// A loopback port where a connection is refused, for as long as the value is kept: a socket
/// bound to it that never listens. Nothing else can bind the port meanwhile, unlike a fixed
/// "unused" port (port 1 is someone's on a shared machine) or a port closed before use.
public final class ClosedPort {
    public let port: Int
    private let descriptor: Int32

    public convenience init() throws { try self.init(port: 0) }

    /// Holds `port` (0: a free one) closed, e.g. the port of a server a test stopped and will
    /// start again on it, so nothing else takes it meanwhile (`SO_REUSEADDR`, as servers bind,
    /// so the stopped server's connections in TIME_WAIT do not stand in the way).
    public init(port wanted: Int) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var reuse: Int32 = 1
        if wanted != 0 { setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size)) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(wanted).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard descriptor >= 0, bound == 0, named == 0 else {
            if descriptor >= 0 { close(descriptor) }
            throw CommandFailure("cannot reserve a loopback port (errno \(errno))")
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
