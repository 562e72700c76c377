import NIOSSL

/// How a `rediss://` connection checks the server: against the CAs of a PEM file, or the
/// system's trust roots. The certificate must name the endpoint's host (a DNS name, also sent
/// as SNI) or its IP address. There is no way to turn verification off.
public struct RedisTLS: Sendable, Hashable {
    /// PEM file of the CAs to trust; nil for the system's roots.
    public var caFilePath: String?

    public init(caFilePath: String? = nil) {
        self.caFilePath = caFilePath
    }

    /// The client context, loaded once per client; a missing or empty CA file is an error here,
    /// not at the first connection.
    public func makeContext() throws(RedisError) -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        if let caFilePath {
            let roots: [NIOSSLCertificate]
            do {
                roots = try NIOSSLCertificate.fromPEMFile(caFilePath)
            } catch {
                throw .tlsConfigurationFailed(path: caFilePath, reason: "not a readable PEM file of certificates (\(error))")
            }
            guard !roots.isEmpty else { throw .tlsConfigurationFailed(path: caFilePath, reason: "it holds no certificate") }
            configuration.trustRoots = .certificates(roots)
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw .tlsConfigurationFailed(path: caFilePath ?? "the system's trust roots", reason: "\(error)")
        }
    }
}
