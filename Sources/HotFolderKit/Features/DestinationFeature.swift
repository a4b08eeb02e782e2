import Foundation
import Synchronization

/// Whether one destination of a folder can take documents: the AND of its
/// sources, checked in order; the first that says no is the one reported.
/// Observers hear of every change of the combined answer (and of who says no).
final class DestinationFeature: @unchecked Sendable {
    struct Verdict: Equatable, Sendable {
        var available: Bool
        /// The source that said no.
        var source: String?
        var reason: String?
        static let yes = Verdict(available: true)
    }

    let destination: DestinationKind
    let sources: [any FeatureSource]
    private let last = Mutex<Verdict?>(nil)
    private let observers = Mutex<[@Sendable (Verdict) -> Void]>([])

    init(destination: DestinationKind, sources: [any FeatureSource]) {
        self.destination = destination
        self.sources = sources
        for source in sources {
            source.observe { [weak self] _ in self?.recompute() }
        }
    }

    func observe(_ observer: @escaping @Sendable (Verdict) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Asks every source now (but `excluded`, which the caller asks itself);
    /// nil when all say yes, else the one that says no.
    func check(excluding excluded: (any FeatureSource)? = nil) -> (any FeatureSource, String)? {
        defer { recompute() } // a source's first answer changes nothing it would report
        for source in sources where source !== excluded {
            if case .unavailable(let why) = source.check() { return (source, why) }
        }
        return nil
    }

    private func recompute() {
        var verdict = Verdict.yes
        for source in sources {
            if case .unavailable(let why) = source.state {
                verdict = Verdict(available: false, source: source.sourceName, reason: why)
                break
            }
        }
        let changed = last.withLock { l -> Bool in
            defer { l = verdict }
            return l != verdict
        }
        guard changed else { return }
        for o in observers.withLock({ $0 }) { o(verdict) }
    }

    func releaseWaiting() {
        for source in sources { source.releaseWaiting() }
    }
}
