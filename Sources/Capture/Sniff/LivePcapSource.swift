import CPcap
#if canImport(Glibc)
import Glibc
#endif

/// Packets captured live from a network interface through libpcap (`pcap_create`,
/// `pcap_activate`, a BPF filter), read one at a time with a bounded wait.
///
/// - Immediate mode: packets are delivered as they arrive, not when a kernel buffer fills.
/// - ``next()`` returns nil when nothing arrived within the read timeout, so a caller can check
///   a deadline or a stop flag between calls. ``breakLoop()`` may be called from another thread.
/// - Needs capture permission (root, or CAP_NET_RAW and CAP_NET_ADMIN on Linux).
/// - Not thread-safe otherwise.
public final class LivePcapSource {
    public let interface: String
    public let filter: String
    public let linkType: PcapLinkType
    private let handle: OpaquePointer
    private let selectableDescriptor: Int32
    private let readTimeoutMilliseconds: Int32
    private var nextIndex = 0

    /// - Parameters:
    ///   - filter: a BPF expression, e.g. `tcp port 4984`.
    ///   - snapLength: bytes kept per packet; the default covers loopback's 64 KiB MTU.
    ///   - bufferBytes: the kernel ring; libpcap sizes its slots by `snapLength`, so this bounds
    ///     how many packets can wait while the reader is busy (see ``droppedPackets``).
    ///   - readTimeoutMilliseconds: the longest ``next()`` waits for a packet.
    public init(
        interface: String, filter: String, snapLength: Int32 = 65_536 + 256, bufferBytes: Int32 = 32 << 20,
        readTimeoutMilliseconds: Int32 = 100
    ) throws {
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
        guard let handle = pcap_create(interface, &errorBuffer) else {
            throw CaptureError.liveCaptureFailed(interface: interface, reason: Self.text(errorBuffer))
        }
        func fail(_ step: String) -> CaptureError {
            let reason = "\(step): \(String(cString: pcap_geterr(handle)))"
            pcap_close(handle)
            return CaptureError.liveCaptureFailed(interface: interface, reason: reason)
        }
        pcap_set_snaplen(handle, snapLength)
        pcap_set_buffer_size(handle, bufferBytes)
        pcap_set_promisc(handle, 0)
        pcap_set_timeout(handle, readTimeoutMilliseconds)
        pcap_set_immediate_mode(handle, 1)
        pcap_set_tstamp_precision(handle, Int32(PCAP_TSTAMP_PRECISION_NANO))
        let status = pcap_activate(handle)
        if status < 0 { throw fail("pcap_activate failed (\(status))") }
        var program = bpf_program()
        if pcap_compile(handle, &program, filter, 1, PCAP_NETMASK_UNKNOWN) != 0 { throw fail("bad filter \"\(filter)\"") }
        defer { pcap_freecode(&program) }
        if pcap_setfilter(handle, &program) != 0 { throw fail("pcap_setfilter failed") }
        // Non-blocking reads plus our own poll: libpcap's read timeout does not bound every wait
        // (with immediate mode on Linux a read can block until a packet comes).
        if pcap_setnonblock(handle, 1, &errorBuffer) != 0 { throw fail("pcap_setnonblock failed") }
        let descriptor = pcap_get_selectable_fd(handle)
        if descriptor < 0 { throw fail("no selectable descriptor") }
        self.selectableDescriptor = descriptor
        self.readTimeoutMilliseconds = readTimeoutMilliseconds
        self.handle = handle
        self.interface = interface
        self.filter = filter
        self.linkType = PcapLinkType(rawValue: UInt32(bitPattern: pcap_datalink(handle)))
    }

    deinit { pcap_close(handle) }

    /// Whether live capture on `interface` can be opened here (permission, interface exists).
    public static func canCapture(on interface: String) -> Bool {
        (try? LivePcapSource(interface: interface, filter: "tcp port 9")) != nil
    }

    /// The next packet, or nil if none arrived within the read timeout (or after ``breakLoop()``).
    public func next() throws -> PcapPacket? {
        if let packet = try read() { return packet }
        var descriptor = pollfd(fd: selectableDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, readTimeoutMilliseconds)
        return try read()
    }

    private func read() throws -> PcapPacket? {
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        switch pcap_next_ex(handle, &header, &data) {
        case 1:
            guard let header, let data else { return nil }
            defer { nextIndex += 1 }
            return PcapPacket(index: nextIndex, record: header.pointee, data: data, linkType: linkType)
        case 0, PCAP_ERROR_BREAK:
            return nil
        default:
            throw CaptureError.liveCaptureFailed(interface: interface, reason: String(cString: pcap_geterr(handle)))
        }
    }

    /// Packets the kernel dropped because the buffer was full (libpcap's `ps_drop`), if known.
    public var droppedPackets: UInt32? {
        var stats = pcap_stat()
        return pcap_stats(handle, &stats) == 0 ? stats.ps_drop : nil
    }

    /// Makes a blocked ``next()`` return.
    public func breakLoop() { pcap_breakloop(handle) }

    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
