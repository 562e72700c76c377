import FuzzSupport
import ProxyProtocol

/// ``ProxyHeaderParser``, the relay's reader of the PROXY protocol header (v1 text, v2 binary) a
/// load balancer puts before a client's bytes (`relay --proxy-protocol`).
///
/// Input: a mode byte (bits 0-2: the version 2 header limit), a count `k` and `k` 16-bit piece
/// sizes, then the stream. Parsed whole and cut into those pieces, as reads would deliver it,
/// the header, where it ends and the error's kind must be the same; the parser never holds more
/// than one header's bytes, never says it consumed more than a read, and a header it accepts,
/// written back in either version (v1 has no LOCAL), parses to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let limits = ProxyProtocolLimits(maxVersion2HeaderBytes: limitChoices[Int(input.byte() & 7)])
    var cuts = FuzzInput(input.take(2 * Int(input.byte() % 32)))
    let stream = input.rest()

    let whole = parse([stream], limits: limits)
    let cut = parse(pieces(of: stream, cuts: &cuts, maxPiece: 64), limits: limits)
    fuzzCheck(whole == cut, "results differ when the stream is cut:\n\(whole)\n\(cut)")
    if case let .header(header, _) = whole {
        let roomy = ProxyProtocolLimits(maxVersion2HeaderBytes: 16 + 65_535)
        fuzzCheck(parse([header.version2Bytes()], limits: roomy) == .header(header, end: header.version2Bytes().count),
                  "\(header) written back as version 2 does not parse to itself")
        if header != .local {
            let line = header.version1Bytes
            let expected: ProxyHeader = switch header {
            case .local, .unspecified: .unspecified
            case .proxied: header
            }
            fuzzCheck(parse([line], limits: roomy) == .header(expected, end: line.count),
                      "\(header) written back as version 1 does not parse to itself")
        }
    }
    return 0
}

/// Version 2 header limits: the default, the fixed part only, an IPv4 block, an IPv6 block, a
/// little room for TLVs, the protocol's largest.
private let limitChoices = [ProxyProtocolLimits().maxVersion2HeaderBytes, 16, 28, 52, 64, 216, 600, 16 + 65_535]

private enum Outcome: Equatable, CustomStringConvertible {
    /// The header, and the stream offset just past it.
    case header(ProxyHeader, end: Int)
    /// Only the kind: a refusal quotes the bytes of the read it saw, which depend on the cuts.
    case error(ProxyProtocolError.Kind)
    case incomplete

    var description: String {
        switch self {
        case let .header(header, end): "header \(header) ending at \(end)"
        case let .error(kind): "error \(kind)"
        case .incomplete: "incomplete"
        }
    }
}

private func parse(_ reads: [[UInt8]], limits: ProxyProtocolLimits) -> Outcome {
    var parser = ProxyHeaderParser(limits: limits)
    let held = max(ProxyProtocolLimits.version1MaximumLineBytes, limits.maxVersion2HeaderBytes)
    var offset = 0
    for read in reads {
        do {
            switch try parser.parse(read) {
            case .needMore:
                fuzzCheck(parser.bytesHeld <= held, "\(parser.bytesHeld) bytes held, over \(held)")
                offset += read.count
            case let .header(header, consumed):
                fuzzCheck(consumed >= 1 && consumed <= read.count, "consumed \(consumed) of a \(read.count)-byte read")
                return .header(header, end: offset + consumed)
            }
        } catch {
            return .error(error.kind)
        }
    }
    return .incomplete
}
