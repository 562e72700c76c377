import Foundation
import NIOSSL

/// Why a TLS set-up could not be made, naming the file and the cause in words: the TLS library's
/// own errors (`failedToLoadCertificate`, a file system error's case name) say neither.
public struct BLIPTLSError: Error, Sendable, CustomStringConvertible {
    /// Which of the PEM files a TLS set-up reads.
    public enum File: String, Sendable {
        case certificateChain = "certificate chain"
        case privateKey = "private key"
        case caBundle = "CA bundle"
    }

    public enum Cause: Sendable, Equatable {
        /// The file cannot be opened: no such file, a directory, no permission.
        case unreadable(String)
        /// The file opens but holds no PEM item of the kind wanted.
        case notPEM
        /// Both files load but do not make a context (e.g. the key is not the certificate's).
        case rejected(String)
    }

    public let file: File
    public let path: String
    public let cause: Cause

    public init(file: File, path: String, cause: Cause) {
        self.file = file
        self.path = path
        self.cause = cause
    }

    public var description: String {
        switch cause {
        case .unreadable(let reason): return "\(path): \(reason)"
        case .notPEM: return "\(path) holds no PEM \(file == .privateKey ? "private key" : "certificate")"
        case .rejected(let reason): return "\(path): \(reason)"
        }
    }

    /// Checks that `path` can be read, then runs `load`; a failure of either becomes this error.
    static func loading<T>(_ file: File, _ path: String, _ load: () throws -> T) throws(BLIPTLSError) -> T {
        if let reason = unreadableReason(path) { throw BLIPTLSError(file: file, path: path, cause: .unreadable(reason)) }
        do { return try load() } catch { throw BLIPTLSError(file: file, path: path, cause: .notPEM) }
    }

    /// Why `path` cannot be read as a file, in words; nil when it can.
    public static func unreadableReason(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return "no such file" }
        if isDirectory.boolValue { return "is a directory, not a file" }
        guard FileManager.default.isReadableFile(atPath: path) else { return "permission denied" }
        return nil
    }
}
