import FuzzSupport
import NIOCore
import RedisClient

/// ``RESPParser``, the Redis client's reader of a server's replies.
///
/// Input: a mode byte (bits 0-2: the limits), a count `k` and `k` 16-bit piece sizes, then the
/// stream. Parsed whole and cut into those pieces, as reads would deliver it, the replies and
/// the error must be the same. Every reply keeps within the limits, the parser holds no more
/// than its incomplete element between reads (nothing after an error), and each reply
/// written back as RESP2 parses to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let limits = limitChoices[Int(input.byte() & 7)]
    var cuts = FuzzInput(input.take(2 * Int(input.byte() % 32)))
    let stream = input.rest()

    let whole = parse([stream], limits: limits)
    let cut = parse(pieces(of: stream, cuts: &cuts, maxPiece: 64), limits: limits)
    fuzzCheck(whole.values == cut.values, "replies differ when the stream is cut")
    fuzzCheck(whole.error == cut.error, "errors differ: \(String(describing: whole.error)) vs \(String(describing: cut.error))")
    for value in whole.values {
        check(value, depth: 0, limits: limits)
        var bytes: [UInt8] = []
        write(value, to: &bytes)
        // Invalid UTF-8 in a line comes back as U+FFFD (3 bytes): room for the repaired text.
        let again = parse([bytes], limits: roomy(limits))
        fuzzCheck(again.error == nil && again.values == [value], "a reply written back does not parse to itself")
    }
    return 0
}

private let limitChoices: [RedisLimits] = [
    .default,
    RedisLimits(maxBulkLength: 16, maxArrayElements: 4, maxNestingDepth: 3, maxLineLength: 16, maxReplyBytes: 128),
    RedisLimits(maxBulkLength: 0, maxArrayElements: 1, maxNestingDepth: 1, maxLineLength: 2, maxReplyBytes: 16),
    RedisLimits(maxBulkLength: 300, maxArrayElements: 64, maxNestingDepth: 8, maxLineLength: 40, maxReplyBytes: 1_024),
    RedisLimits(maxBulkLength: 1, maxArrayElements: 0, maxNestingDepth: 0, maxLineLength: 0, maxReplyBytes: 4),
    RedisLimits(maxBulkLength: 64, maxArrayElements: 1_000, maxNestingDepth: 64, maxLineLength: 64, maxReplyBytes: 4_096),
    RedisLimits(maxBulkLength: 8, maxArrayElements: 8, maxNestingDepth: 2, maxLineLength: 21, maxReplyBytes: 64),
    RedisLimits(maxBulkLength: 1 << 16, maxArrayElements: 2, maxNestingDepth: 4, maxLineLength: 1 << 16, maxReplyBytes: 1 << 16),
]

private func roomy(_ limits: RedisLimits) -> RedisLimits {
    RedisLimits(maxBulkLength: limits.maxBulkLength, maxArrayElements: limits.maxArrayElements,
                maxNestingDepth: limits.maxNestingDepth, maxLineLength: 3 * limits.maxLineLength + 20,
                maxReplyBytes: 3 * limits.maxReplyBytes + 20)
}

private func parse(_ reads: [[UInt8]], limits: RedisLimits) -> (values: [RESPValue], error: RedisError?) {
    var parser = RESPParser(limits: limits)
    var values: [RESPValue] = []
    let held = max(limits.maxLineLength, limits.maxBulkLength) + 1
    for read in reads {
        parser.append(ByteBuffer(fuzzBytes: read))
        do {
            while let value = try parser.next() { values.append(value) }
            fuzzCheck(parser.bufferedBytes <= held, "\(parser.bufferedBytes) bytes held between reads, over \(held)")
        } catch {
            fuzzCheck(parser.bufferedBytes == 0, "a failed parser still holds bytes")
            fuzzCheck(parser.failure == error, "the parser's failure is not the error it threw")
            return (values, error)
        }
    }
    return (values, nil)
}

private func check(_ value: RESPValue, depth: Int, limits: RedisLimits) {
    switch value {
    case let .simpleString(text), let .error(text):
        fuzzCheck(!text.utf8.contains(13) && !text.utf8.contains(10), "a line holds CR or LF")
    case let .bulkString(bytes?):
        fuzzCheck(bytes.readableBytes <= limits.maxBulkLength, "a bulk string over the limit")
    case let .array(elements?):
        fuzzCheck(elements.count <= limits.maxArrayElements, "an array over the limit")
        if !elements.isEmpty { fuzzCheck(depth < limits.maxNestingDepth, "arrays nested over the limit") }
        for element in elements { check(element, depth: depth + 1, limits: limits) }
    case .integer, .bulkString(nil), .array(nil):
        break
    }
}

private func write(_ value: RESPValue, to bytes: inout [UInt8]) {
    func line(_ type: Character, _ text: String) {
        bytes.append(type.asciiValue!)
        bytes += Array(text.utf8) + [13, 10]
    }
    switch value {
    case let .simpleString(text): line("+", text)
    case let .error(text): line("-", text)
    case let .integer(number): line(":", String(number))
    case .bulkString(nil): line("$", "-1")
    case let .bulkString(body?):
        line("$", String(body.readableBytes))
        bytes += Array(body.readableBytesView) + [13, 10]
    case .array(nil): line("*", "-1")
    case let .array(elements?):
        line("*", String(elements.count))
        for element in elements { write(element, to: &bytes) }
    }
}
