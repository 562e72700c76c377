import BLIPCore

extension MessageMatch {
    static let keys: Set<String> = ["from", "type", "profile", "collection", "doc", "channel", "user", "clientIP",
                                    "properties", "minBodySize", "maxBodySize", "attachment"]

    /// Reads a rule's `match:` mapping.
    init(parsing node: PolicyNode) throws(PolicyError) {
        self.init()
        let map = try node.mapping(allowed: Self.keys)
        for (key, value) in map.entries {
            switch key {
            case "from": direction = try Self.side(value)
            case "type": types = try value.strings().map { text throws(PolicyError) in try Self.type(text, value) }
            case "profile": profiles = try value.strings()
            case "collection": collection = try value.pattern()
            case "doc": doc = try value.pattern()
            case "channel": channel = try value.pattern()
            case "user": user = try value.pattern()
            case "clientIP": clientIP = try value.cidrBlocks()
            case "properties": properties = try Self.properties(value)
            case "minBodySize": minBodySize = try value.byteSize()
            case "maxBodySize": maxBodySize = try value.byteSize()
            case "attachment": attachment = try AttachmentMatch(parsing: value)
            default: break
            }
        }
        if let minBodySize, let maxBodySize, minBodySize > maxBodySize {
            throw try map.required("maxBodySize").fail("must not be less than minBodySize")
        }
    }

    static func side(_ node: PolicyNode) throws(PolicyError) -> BLIPDirection {
        switch try node.string() {
        case "client": return .clientToServer
        case "server": return .serverToClient
        default: throw node.fail("must be client or server")
        }
    }

    static func type(_ text: String, _ node: PolicyNode) throws(PolicyError) -> MessageType {
        switch text.lowercased() {
        case "request", "msg": return .request
        case "reply", "rpy": return .response
        case "error", "err": return .error
        default: throw node.fail("must be request, reply or error")
        }
    }

    /// `properties:` is a mapping of property names (any) to patterns.
    static func properties(_ node: PolicyNode) throws(PolicyError) -> [(name: String, pattern: TextPattern)] {
        guard case .mapping(let mapping) = node.node else { throw node.fail("must be a mapping of property name to pattern") }
        var result: [(name: String, pattern: TextPattern)] = []
        for (keyNode, value) in mapping {
            guard let name = keyNode.scalar?.string, !name.isEmpty else { throw node.fail("property names must be text") }
            result.append((name, try node.child(name, value).pattern()))
        }
        return result
    }
}

extension AttachmentMatch {
    init(parsing node: PolicyNode) throws(PolicyError) {
        self.init()
        let map = try node.mapping(allowed: ["contentType", "minSize", "maxSize"])
        contentType = try map["contentType"]?.pattern()
        minSize = try map["minSize"]?.byteSize()
        maxSize = try map["maxSize"]?.byteSize()
        if map.entries.isEmpty { throw node.fail("give at least one of contentType, minSize, maxSize") }
    }
}

extension PolicyNode {
    /// A glob or `re:` regex.
    func pattern() throws(PolicyError) -> TextPattern {
        let text = try nonEmptyString()
        do throws(TextPattern.PatternError) {
            return try TextPattern(text)
        } catch {
            throw fail(error.reason)
        }
    }

    /// One CIDR block or a list of them.
    func cidrBlocks() throws(PolicyError) -> [CIDRBlock] {
        var blocks: [CIDRBlock] = []
        for text in try strings() {
            guard let block = CIDRBlock(text) else { throw fail("\(text) is not an IP address or CIDR block") }
            blocks.append(block)
        }
        return blocks
    }
}
