import Capture
import FuzzSupport
import NIOCore

/// ``HTTPUpgradeParser``, the capture importer's reader of a connection's HTTP heads.
///
/// Input: a mode byte (bit 0: request or response; bits 1-2: the head size limit), a count `k`
/// and `k` 16-bit piece sizes, then the stream. Parsed whole and cut into those pieces, the
/// head, the remainder and any error must be the same; head and remainder must account for
/// every byte.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let request = mode & 1 == 0
    // At least 21 bytes: a shorter limit can refuse a prefix as too large before the 21 bytes
    // that show whether it starts like HTTP have arrived, so the error would depend on the cuts.
    let limits = [CaptureLimits.default.maxHTTPHeadBytes, 21, 64, 256]
    let maxHeadBytes = limits[Int(mode >> 1) & 3]
    var cuts = FuzzInput(input.take(2 * Int(input.byte() % 32)))
    let stream = input.rest()

    let whole = parse([stream], request: request, limit: maxHeadBytes)
    let cut = parse(pieces(of: stream, cuts: &cuts, maxPiece: 64), request: request, limit: maxHeadBytes)
    fuzzCheck(whole == cut, "results differ when the stream is cut:\n\(whole)\n\(cut)")
    return 0
}

private func parse(_ reads: [[UInt8]], request: Bool, limit: Int) -> String {
    var parser = HTTPUpgradeParser(maxHeadBytes: limit)
    for (index, read) in reads.enumerated() {
        let buffer = ByteBuffer(fuzzBytes: read)
        // What follows the head: the remainder handed back, then the reads not fed yet.
        func after(_ remainder: ByteBuffer) -> [UInt8] {
            Array(remainder.readableBytesView) + reads[(index + 1)...].joined()
        }
        do {
            if request {
                guard let (head, remainder) = try parser.parseRequest(appending: buffer) else { continue }
                _ = head.path
                _ = head.query
                _ = head.isWebSocketUpgrade
                _ = head.headers.listValues(for: "Sec-WebSocket-Protocol")
                return "request \(head) then \(after(remainder))"
            } else {
                guard let (head, remainder) = try parser.parseResponse(appending: buffer) else { continue }
                _ = head.isSwitchingProtocols
                _ = head.contentLength
                fuzzCheck((100...999).contains(head.status), "status \(head.status)")
                return "response \(head) then \(after(remainder))"
            }
        } catch let error as CaptureError {
            // Only the code: a refusal quotes the first bytes buffered, which depend on the cuts.
            return "error \(error.code)"
        } catch {
            return "error \(error)"
        }
    }
    return "incomplete"
}
