import NIOSSL

/// TLS for the accepting side of a BLIP WebSocket (wss): a PEM certificate chain and private key.
///
/// Loaded once when a server starts; a bad path or key fails the start, not a connection.
public struct BLIPServerTLS: Sendable, Equatable {
    /// PEM file holding the server certificate, then any intermediates.
    public var certificateChainPath: String
    /// PEM file holding the private key of the first certificate.
    public var privateKeyPath: String

    public init(certificateChainPath: String, privateKeyPath: String) {
        self.certificateChainPath = certificateChainPath
        self.privateKeyPath = privateKeyPath
    }

    /// Builds the NIOSSL context (TLS 1.2+, no ALPN: WebSocket over HTTP/1.1 only).
    public func makeContext() throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(certificateChainPath).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: privateKeyPath, format: .pem)
        let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        return try NIOSSLContext(configuration: configuration)
    }
}

/// TLS for the dialling side of a BLIP WebSocket (wss).
///
/// Trust comes from a CA bundle when one is given, else from the system roots. `insecure` turns
/// off certificate and host-name verification entirely; it exists for test gateways only.
public struct BLIPClientTLS: Sendable, Equatable {
    /// PEM bundle of trusted CAs, or nil for the system's roots.
    public var caBundlePath: String?
    /// Skip all verification. Never the default.
    public var insecure: Bool

    public init(caBundlePath: String? = nil, insecure: Bool = false) {
        self.caBundlePath = caBundlePath
        self.insecure = insecure
    }

    public func makeContext() throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if insecure {
            configuration.certificateVerification = .none
        } else if let caBundlePath {
            configuration.trustRoots = .file(caBundlePath)
        }
        return try NIOSSLContext(configuration: configuration)
    }
}
