import Foundation

/// Status lines for people (not log records): they go to standard error so that standard output
/// stays a clean stream of log lines or JSON records.
public enum FileHandleOutput {
    public static func standardError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// A line written to standard output at once, unbuffered: for live output (`sniff`), which
    /// `print` would hold back in a pipe (`sniff | jq`) until a block filled.
    public static func standardOutput(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
