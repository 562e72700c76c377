import BLIPCore

/// The simplest policy: deny every request, in either direction, whose `Profile` is in a set,
/// with an ERR (HTTP 403 by default, wire-format reference §6). Everything else passes.
/// `blipscope relay --deny-profile` uses it, and `bench relay --mediate` measures with it.
public final class DenyProfilesPolicy: MediationPolicy {
    public let profiles: Set<String>
    public let error: ErrorReply

    public init(profiles: Set<String>, error: ErrorReply = ErrorReply(message: "denied by blipscope")) {
        self.profiles = profiles
        self.error = error
    }

    public func decide(head: MediatedHead) -> HeadDecision {
        guard head.type == .request, let profile = head.properties.profile, profiles.contains(profile) else { return .pass }
        return .deny(error, rule: "deny-profile \(profile)")
    }

    public func decide(body: BLIPMessage, head: MediatedHead) -> BodyDecision { .pass }
}
