import FuzzSupport
import NIOCore
import NIOEmbedded
import NIOHTTP1
@testable import Relay

/// The relay's reading of a client's upgrade request: the bytes go through the HTTP decoder of
/// the relay's pipeline (NIO's), and each request head through ``ClientHandshake`` (path,
/// Upgrade, Connection, key, version, sub-protocols, user from Basic auth or a cookie) and the
/// refusal it maps to. Needs `-enable-testing` (ClientHandshake is internal).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let channel = EmbeddedChannel()
    defer { _ = try? channel.finish() }
    do {
        try channel.pipeline.syncOperations.addHandler(
            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)))
        try channel.writeInbound(ByteBuffer(fuzzBytes: UnsafeBufferPointer(start: data, count: size)))
    } catch {
        return 0  // not HTTP: the relay's decoder refuses it before any handshake
    }
    while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
        guard case .head(let head) = part else { continue }
        do throws(RelayError) {
            let handshake = try ClientHandshake(head)
            fuzzCheck(!handshake.database.isEmpty, "an empty database")
            fuzzCheck(handshake.offeredProtocols.contains { $0.hasPrefix("BLIP_3+") }, "no BLIP protocol")
        } catch {
            let refusal = HandshakeHandler.refusal(for: error)
            _ = refusal
            _ = error.description
            _ = error.httpStatus
        }
        _ = ClientHandshake.user(from: head.headers)
    }
    return 0
}
