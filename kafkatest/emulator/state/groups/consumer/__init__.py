"""KIP-848 consumer groups (ConsumerGroupHeartbeat): the coordinator, its members and assignors."""
