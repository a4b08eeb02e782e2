import Foundation
import Synchronization

/// One source's answer to "can this destination take documents now?".
public enum Availability: Equatable, Sendable {
    case unknown
    case available
    /// Why not, and what to do about it, in one sentence for the log and `hotfolder status`.
    case unavailable(String)
}

/// A source of seed 002's feature system: it caches its answer, tells its
/// observers when the answer changes, and parks work until it says yes.
/// Availability of a destination is the AND of its sources.
protocol FeatureSource: AnyObject, Sendable {
    /// Who says no, as `hotfolder status` shows it ("printer", "export folder", …).
    var sourceName: String { get }
    /// The cached answer.
    var state: Availability { get }
    /// Asks again now (cheap for every source here) and updates the cache.
    @discardableResult func check() -> Availability
    func observe(_ observer: @escaping @Sendable (Availability) -> Void)
    /// Runs `resume` once the source says yes (at once if it does now).
    func waitUntilAvailable(_ resume: @escaping @Sendable () -> Void)
    /// Hands every parked piece of work back (the folder is being replaced).
    func releaseWaiting()
}

/// A source that can only learn about changes by asking: while work waits for
/// it, it asks again with backoff (0.5 s doubling to `maxDelay`), and resumes the
/// work when the answer becomes yes.
class ProbedSource: FeatureSource, @unchecked Sendable {
    let sourceName: String
    private let maxDelay: Double
    private let timers: DispatchQueue

    private struct Inner {
        var state: Availability = .unknown
        var waiting: [@Sendable () -> Void] = []
        var probing = false
        var observers: [@Sendable (Availability) -> Void] = []
    }

    private let inner = Mutex(Inner())

    init(sourceName: String, maxDelay: Double = 15) {
        self.sourceName = sourceName
        self.maxDelay = maxDelay
        self.timers = DispatchQueue(label: "feature.\(sourceName)")
    }

    /// The actual question; subclasses answer it.
    func probe() -> Availability { .available }

    var state: Availability { inner.withLock { $0.state } }

    func observe(_ observer: @escaping @Sendable (Availability) -> Void) {
        inner.withLock { $0.observers.append(observer) }
    }

    @discardableResult
    func check() -> Availability {
        let new = probe()
        set(new)
        return new
    }

    func set(_ new: Availability) {
        let (observers, resumed) = inner.withLock { s -> ([@Sendable (Availability) -> Void], [@Sendable () -> Void]) in
            guard s.state != new else { return ([], []) }
            s.state = new
            var resumed: [@Sendable () -> Void] = []
            if new == .available {
                resumed = s.waiting
                s.waiting.removeAll()
            }
            return (s.observers, resumed)
        }
        for o in observers { o(new) }
        for r in resumed { r() }
    }

    func waitUntilAvailable(_ resume: @escaping @Sendable () -> Void) {
        let startProbe = inner.withLock { s -> Bool in
            s.waiting.append(resume)
            defer { s.probing = true }
            return !s.probing
        }
        if startProbe { probe(after: 0.5) }
    }

    func releaseWaiting() {
        let all = inner.withLock { s -> [@Sendable () -> Void] in
            defer { s.waiting.removeAll() }
            return s.waiting
        }
        for r in all { r() }
    }

    /// Work parked on this source.
    var waitingCount: Int { inner.withLock { $0.waiting.count } }

    private func probe(after delay: Double) {
        timers.asyncAfter(deadline: .now() + delay) { [self] in
            let state = check()
            let again = inner.withLock { s -> Bool in
                if s.waiting.isEmpty || state == .available {
                    s.probing = false
                    return false
                }
                return true
            }
            // Work parked after `check` answered yes is handed on too.
            if state == .available {
                let late = inner.withLock { s -> [@Sendable () -> Void] in
                    defer { s.waiting.removeAll() }
                    return s.waiting
                }
                for r in late { r() }
            }
            if again { probe(after: min(delay * 2, maxDelay)) }
        }
    }
}
