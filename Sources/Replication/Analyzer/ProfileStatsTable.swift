/// A session's ``ProfileStats``, one per profile, each at a slot that never moves: a request
/// looks its profile up once and its reply is counted at the slot the request got.
///
/// Known profiles find their slot by ``ReplicationProfile/ordinal`` (no String hashing); other
/// profiles, `(none)` for requests without one and `(other)` by name. At most `maxProfiles`
/// profiles get a slot of their own; past that, new ones share `(other)` (which may be one
/// more).
struct ProfileStatsTable {
    private(set) var stats: [ProfileStats] = []
    /// Slots of the known profiles by ordinal; -1 for none yet.
    private var knownSlots = [Int](repeating: -1, count: ReplicationProfile.allCases.count)
    private var otherSlots: [String: Int] = [:]
    /// The last profile looked up by name and its slot: traffic mostly repeats one profile.
    private var lastOther: (name: String, slot: Int)?
    let maxProfiles: Int

    init(maxProfiles: Int) { self.maxProfiles = maxProfiles }

    /// The slot that counts requests of `profile` (nil: none), adding one if needed.
    mutating func slot(profile: String?, known: ReplicationProfile?) -> Int {
        if let known {
            let slot = knownSlots[known.ordinal]
            if slot >= 0 { return slot }
            if stats.count < maxProfiles {
                knownSlots[known.ordinal] = stats.count
                stats.append(ProfileStats(profile: known.rawValue))
                return stats.count - 1
            }
        }
        let name = profile ?? "(none)"
        if let last = lastOther, last.name == name { return last.slot }
        let slot = otherSlot(name)
        lastOther = (name, slot)
        return slot
    }

    private mutating func otherSlot(_ name: String) -> Int {
        if let slot = otherSlots[name] { return slot }
        guard stats.count < maxProfiles else { return otherSlots["(other)"] ?? addOther("(other)") }
        return addOther(name)
    }

    private mutating func addOther(_ name: String) -> Int {
        otherSlots[name] = stats.count
        stats.append(ProfileStats(profile: name))
        return stats.count - 1
    }

    mutating func update(_ slot: Int, _ change: (inout ProfileStats) -> Void) { change(&stats[slot]) }

    /// Every profile's stats, sorted by profile.
    var sorted: [ProfileStats] { stats.sorted { $0.profile < $1.profile } }
}
