import BLIPCore
extension PolicyAction {
    static let names: Set<String> = ["deny", "readOnly", "filterChanges", "delay", "rateLimit", "errorReply", "close",
                                     "withholdAcks", "replyLatency", "bandwidth"]

    /// Reads one action key's value. `readOnly` is handled by the rule (it also changes the match).
    init(name: String, parsing node: PolicyNode) throws(PolicyError) {
        switch name {
        case "deny", "errorReply":
            let reply = try ErrorReply(parsing: node, defaultCode: name == "deny" ? 403 : 503)
            self = name == "deny" ? .deny(reply) : .errorReply(reply)
        case "filterChanges":
            let map = try node.mapping(allowed: ["doc"])
            self = .filterChanges(doc: try map.required("doc").pattern())
        case "delay":
            self = .delay(try DelayRange(parsing: node, fixedKey: "fixed"))
        case "replyLatency":
            self = .replyLatency(try DelayRange(parsing: node, fixedKey: "latency"))
        case "rateLimit":
            self = .rateLimit(try RateLimit(parsing: node))
        case "close":
            self = .close(try CloseFault(parsing: node))
        case "withholdAcks":
            if node.isMapping {
                let map = try node.mapping(allowed: ["duration"])
                self = .withholdAcks(nanoseconds: try map.required("duration").duration())
            } else {
                self = .withholdAcks(nanoseconds: try node.duration())
            }
        case "bandwidth":
            let value = node.isMapping ? try node.mapping(allowed: ["bytesPerSecond"]).required("bytesPerSecond") : node
            let rate = try value.byteSize()
            guard rate > 0 else { throw value.fail("must be a positive byte rate") }
            self = .bandwidth(bytesPerSecond: rate)
        default:
            throw node.fail("unknown action")
        }
    }
}

extension ErrorReply {
    /// `{ domain, code, message }`, each optional; `true` or `{}` for the defaults.
    init(parsing node: PolicyNode, defaultCode: Int, defaultMessage: String? = nil) throws(PolicyError) {
        self.init(code: defaultCode,
                  message: defaultMessage ?? (defaultCode == 403 ? "forbidden by policy" : "unavailable (injected fault)"))
        if !node.isMapping {
            guard try node.bool() else { throw node.fail("must be a mapping or true") }
            return
        }
        let map = try node.mapping(allowed: ["domain", "code", "message"])
        if let value = map["domain"] { domain = try value.nonEmptyString() }
        if let value = map["code"] { code = try value.integer(min: 1) }
        if let value = map["message"] { message = try value.string() }
        if domain == "HTTP", !(400...599).contains(code) { throw try map.required("code").fail("an HTTP error code must be 400…599") }
    }
}

extension DelayRange {
    /// A duration (`200ms`), or `{ <fixedKey>: d }`, or `{ min: a, max: b }`; `jitter: j` widens a
    /// fixed value to `d-j … d+j` (clamped at 0).
    init(parsing node: PolicyNode, fixedKey: String) throws(PolicyError) {
        guard node.isMapping else {
            self = .fixed(try node.duration())
            return
        }
        let map = try node.mapping(allowed: [fixedKey, "min", "max", "jitter"])
        if let fixed = map[fixedKey] {
            guard map["min"] == nil, map["max"] == nil else { throw fixed.fail("give either \(fixedKey) or min and max") }
            let value = try fixed.duration()
            let jitter = try map["jitter"]?.duration() ?? 0
            self.init(min: value > jitter ? value - jitter : 0, max: value + jitter)
            return
        }
        guard map["jitter"] == nil else { throw try map.required("jitter").fail("jitter goes with \(fixedKey)") }
        let low = try map.required("min").duration()
        let high = try map.required("max").duration()
        guard low <= high else { throw try map.required("max").fail("must not be less than min") }
        self.init(min: low, max: high)
    }
}

extension RateLimit {
    init(parsing node: PolicyNode) throws(PolicyError) {
        let map = try node.mapping(allowed: ["perSecond", "burst", "bytesPerSecond", "burstBytes", "key", "onExceed", "scope"])
        perSecond = try map["perSecond"]?.positiveNumber()
        bytesPerSecond = try map["bytesPerSecond"].map { value throws(PolicyError) in
            let rate = try value.byteSize()
            guard rate > 0 else { throw value.fail("must be a positive number") }
            return Double(rate)
        }
        guard perSecond != nil || bytesPerSecond != nil else { throw node.fail("give perSecond and/or bytesPerSecond") }
        burst = try map["burst"]?.positiveNumber() ?? max(1, perSecond ?? 1)
        burstBytes = try map["burstBytes"].map { value throws(PolicyError) in Double(try value.byteSize()) } ?? (bytesPerSecond ?? 0)
        if let value = map["burst"], perSecond == nil { throw value.fail("burst goes with perSecond") }
        if let value = map["burstBytes"], bytesPerSecond == nil { throw value.fail("burstBytes goes with bytesPerSecond") }
        if let value = map["burstBytes"], burstBytes <= 0 { throw value.fail("must be a positive number") }
        key = .session
        if let value = map["key"] {
            guard let parsed = Key(rawValue: try value.string()) else {
                throw value.fail("must be one of: \(Key.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            key = parsed
        }
        onExceed = .delay
        if let value = map["onExceed"] {
            guard let parsed = OnExceed(rawValue: try value.string()) else { throw value.fail("must be delay or deny") }
            onExceed = parsed
        }
        scope = try LimitScope(parsing: map["scope"])
        if scope == .fleet, key == .session, let value = map["scope"] {
            throw value.fail("a session's bucket is never shared: give key user, clientIP or global with scope fleet")
        }
    }
}

extension CloseFault {
    init(parsing node: PolicyNode) throws(PolicyError) {
        let map = try node.mapping(allowed: ["code", "reason", "afterMessages", "afterBytes"])
        let codeNode = try map.required("code")
        let value = try codeNode.integer(min: 0)
        guard let code = Self.allowedCodes.first(where: { Int($0) == value }) else {
            throw codeNode.fail("must be one of \(Self.allowedCodes.map(String.init).joined(separator: ", "))")
        }
        self.code = code
        reason = try map["reason"]?.string() ?? "closed by policy"
        afterMessages = try map["afterMessages"]?.integer(min: 1)
        afterBytes = try map["afterBytes"].map { value throws(PolicyError) in
            let bytes = try value.byteSize()
            guard bytes > 0 else { throw value.fail("must be a positive byte count") }
            return bytes
        }
    }
}
