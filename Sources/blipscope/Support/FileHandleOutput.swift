import Foundation

/// Status lines for people (not log records): they go to standard error so that standard output
/// stays a clean stream of log lines or JSON records.
enum FileHandleOutput {
    static func standardError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
