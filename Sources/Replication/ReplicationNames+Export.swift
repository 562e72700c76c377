/// The protocol's names (``ReplicationProfile``, ``PropertyName``) live below this module, so that
/// Policy, Mediation and Replay name them too; whoever reads replication messages sees them here.
@_exported import ReplicationNames
