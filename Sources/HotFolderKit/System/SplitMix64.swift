/// SplitMix64: a small, fast generator of 64 random bits. Job ids use it
/// seeded once from the system (no getrandom call per document); the tests
/// seed it to replay a random schedule.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }
    init() { self.init(seed: UInt64.random(in: 0...UInt64.max)) }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
