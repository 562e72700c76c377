import BLIPCore
import FuzzSupport
import NIOCore
import Policy
@testable import Relay
import WebSocketWire
import struct Capture.CaptureTimestamp

/// The time every input carries: the core reads no clock, so a fixed one keeps runs repeatable.
let fuzzTime = ReceiptTime(uptime: .uptimeNanoseconds(1_000_000_000), wall: CaptureTimestamp(seconds: 1_700_000_000, nanoseconds: 0))

/// A relay session fed by two hostile peers: the relay's sans-IO ``SessionCore`` takes bytes from
/// the client and the upstream in reads the input cuts, read batches, writability, back-pressure,
/// timers and closes, in pass-through, strict or policy-mediating mode (a policy that denies,
/// delays, paces and filters). Whatever it writes to a hop must be whole, valid WebSocket frames, masked
/// towards the upstream (checked by a scanner per hop). Needs `-enable-testing`.
///
/// Input: a mode byte (bit 0: strict; bit 1: the policy; bit 2: no idle timeout; bit 3: the
/// observer reads no bodies, as the log at `info` does, so bodies the analyzer does not read are
/// counted, not kept), then ops: a byte
/// (low 4 bits the op, bit 7 the side) and its arguments. Ops: 0-3 bytes (`len16 || bytes`);
/// 4 a WebSocket frame wrapped around `len16 || payload` (opcode from the next byte), masked as
/// the side must; 5 read complete; 6 read requested; 7 writability; 8 buffered bytes; 9 a
/// scheduled timer fires; 10 hold or release reading; 11 the connection closes; 12 it fails;
/// 13 shut down.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    var configuration = RelayConfiguration(upstream: .single(UpstreamURL("ws://127.0.0.1:4984")!))
    configuration.strict = mode & 1 != 0
    if mode & 2 != 0 { configuration.policy = policy }
    configuration.idleTimeout = mode & 4 != 0 ? nil : .seconds(8)
    let info = SessionInfo(id: 7, client: ClientAddress(peer: try? SocketAddress(ipAddress: "10.1.2.3", port: 50_000)), user: "alice", database: "db", target: "/db/_blipsync",
                           upstream: "ws://127.0.0.1:4984")
    let sink = Sink(readsBodies: mode & 8 == 0)
    let core = SessionCore(info: info, configuration: configuration, observers: ObserverSet([sink]))
    var harness = Harness(core: core)
    harness.on(.attached(.upstream, at: fuzzTime))
    harness.on(.attached(.client, at: fuzzTime))

    while !input.isAtEnd && !harness.finished {
        let op = input.byte()
        let side: SessionSide = op & 0x80 == 0 ? .client : .upstream
        switch op & 0x0F {
        case 0, 1, 2, 3:
            let bytes = input.record()
            guard !harness.gone[side.rawValue] else { continue }
            harness.on(.bytes(side, ByteBuffer(fuzzBytes: bytes), at: fuzzTime))
        case 4:
            let opcode = input.byte() & 0x0F
            let payload = input.record()
            guard !harness.gone[side.rawValue] else { continue }
            let mask = side == .client ? WebSocketMaskingKey(1, 2, 3, 4) : nil
            harness.on(.bytes(side, WebSocketFrameWriter.frame(opcode: opcode, payload: ByteBuffer(fuzzBytes: payload),
                                                              mask: mask), at: fuzzTime))
        case 5:
            guard !harness.gone[side.rawValue] else { continue }
            harness.on(.readComplete(side))
        case 6:
            guard !harness.gone[side.rawValue] else { continue }
            harness.on(.readRequested(side))
        case 7:
            let writable = input.bool()
            guard !harness.gone[side.rawValue] else { continue }
            harness.on(.writability(side, isWritable: writable))
        case 8:
            let bytes = Int(input.uint16())
            guard !harness.gone[side.rawValue] else { continue }
            harness.on(.buffered(side, bytes: bytes))
        case 9:
            let choice = Int(input.byte())
            guard !harness.timers.isEmpty else { continue }
            let timer = harness.timers.sorted { "\($0)" < "\($1)" }[choice % harness.timers.count]
            harness.timers.remove(timer)
            harness.on(.timerFired(timer, at: fuzzTime))
        case 10:
            harness.on(input.bool() ? .holdReading : .releaseReading)
        case 11, 12:
            guard !harness.gone[side.rawValue] else { continue }
            harness.gone[side.rawValue] = true
            harness.on(op & 0x0F == 11 ? .connectionClosed(side, at: fuzzTime) : .channelFailed(side))
        case 13:
            harness.on(.shutDown(at: fuzzTime))
        default:
            break
        }
    }
    // The hops go away in the end, as they do.
    for side in SessionSide.allCases where !harness.gone[side.rawValue] {
        harness.gone[side.rawValue] = true
        harness.on(.connectionClosed(side, at: fuzzTime))
    }
    return 0
}

/// Denies a profile, delays another (and paces its replies), filters changes, closes on a third:
/// the mediator's paths.
private let policy: PolicyStore = {
    let yaml = """
        rules:
          - name: deny-secret
            match: { profile: secret }
            action: { deny: { domain: HTTP, code: 403, message: no } }
          - name: slow-echo
            match: { type: request, profile: echo }
            action: { delay: 2ms }
          - name: thin-pipe
            match: { type: reply, profile: echo }
            action: { bandwidth: 64KB }
          - name: no-drafts
            match: { profile: [rev, changes, proposeChanges], doc: "draft-*" }
            action: { deny: { domain: HTTP, code: 403, message: draft } }
          - name: end
            match: { profile: bye }
            action: { close: { code: 4002, reason: bye } }
        """
    return PolicyStore(document: try! PolicyDocument(yaml: yaml))
}()

private final class Sink: RelayObserver, Sendable {
    let interests: RelayEventInterests
    init(readsBodies: Bool) {
        var interests = RelayEventInterests.all.union(.frameBytes)
        if !readsBodies { interests.remove(.messageBodies) }
        self.interests = interests
    }
    func observe(_ event: RelayEvent) {}
}

private struct Harness {
    let core: SessionCore
    var timers: Set<SessionTimer> = []
    var gone = [false, false]
    var finished = false
    /// What the relay wrote to each hop, scanned as that hop's peer would (masks towards the upstream).
    var written = [WebSocketFrameScanner(maxFrameSize: 1 << 30), WebSocketFrameScanner(maxFrameSize: 1 << 30,
                                                                                     requiresMask: true)]

    mutating func on(_ input: SessionInput) {
        var actions: [SessionAction] = []
        core.handle(input, into: &actions)
        for action in actions {
            switch action {
            case .write(let side, let bytes):
                written[side.rawValue].append(bytes)
                do {
                    while try written[side.rawValue].next() != nil {}
                } catch {
                    fuzzCheck(false, "the relay wrote bad framing to the \(side): \(error)")
                }
            case .schedule(let timer, _): timers.insert(timer)
            case .cancel(let timer): timers.remove(timer)
            case .finished: finished = true
            case .flush, .read, .acknowledge, .close, .drop: break
            }
        }
    }
}
