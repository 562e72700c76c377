import Foundation

/// The port a child process announces on standard error with `listening on HOST:PORT` (the relay
/// and go-blip's peer both do), read as it comes.
enum ListenerAnnouncement {
    static let pattern = #"listening on [^ ]*:(\d+)"#

    /// Reads `errors` until the announcement is complete (a launcher such as valgrind may write
    /// lines of its own first), the stream ends or `seconds` pass; terminates `process` and
    /// throws, naming it `what`, without one.
    static func port(from errors: Pipe, of process: Process, within seconds: Double, what: String) throws -> Int {
        var announced = ""
        let deadline = Date().addingTimeInterval(seconds)
        while announced.range(of: pattern + "\\D", options: .regularExpression) == nil, Date() < deadline {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            announced += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = announced.range(of: pattern, options: .regularExpression),
              let port = Int(announced[range].split(separator: ":").last ?? "") else {
            process.terminate()
            throw BenchError("\(what) did not start: \(announced)")
        }
        return port
    }
}

extension String {
    /// The text and spaces up to `width` columns, and at least one space after it.
    func padded(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
