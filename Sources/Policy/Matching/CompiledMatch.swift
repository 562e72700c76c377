/// The keys of a ``MessageMatch`` after side, type and profile, held by a class so the engine
/// reaches them by reference: calling through a copied `MessageMatch` retains and releases every
/// one of its fields, which was most of the time a rule took to say no.
final class CompiledMatch: Sendable {
    let user: TextPattern?
    let clientIP: [CIDRBlock]?
    let collection: TextPattern?
    let doc: TextPattern?
    let channel: TextPattern?
    let properties: [(name: String, pattern: TextPattern)]

    init(_ match: MessageMatch) {
        user = match.user
        clientIP = match.clientIP
        collection = match.collection
        doc = match.doc
        channel = match.channel
        properties = match.properties
    }

    /// The keys after side, type and profile (the engine checks those with bit masks, reading
    /// the profile once); `lookups` keeps property reads for the other rules of the same message.
    func matchesRest(_ message: MessageFacts, session: SessionFacts, lookups: inout MessageLookups) -> Bool {
        if let user {
            guard let name = session.user, user.matches(name) else { return false }
        }
        if let clientIP {
            guard let address = session.clientAddress, clientIP.contains(where: { $0.contains(address) }) else { return false }
        }
        if let collection {
            guard let name = message.collection, collection.matches(name) else { return false }
        }
        if let doc {
            guard let id = lookups.docID(message), doc.matches(id) else { return false }
        }
        if let channel {
            guard message.channels.contains(where: { channel.matches($0) }) else { return false }
        }
        for (name, pattern) in properties {
            guard let value = message.properties[name], pattern.matches(value) else { return false }
        }
        return true
    }
}
