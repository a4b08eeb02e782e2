import Foundation
import Synchronization

/// Whether a print destination can take jobs now, and if not, why (seed 002's
/// feature source for the printer: cupsd reachable, queue exists, accepting,
/// not stopped). It caches its answer, tells observers when it changes, and
/// while it says no it probes CUPS with backoff and resumes the documents that
/// wait for it once the printer is back.
final class PrinterAvailability: @unchecked Sendable {
    enum State: Equatable, Sendable {
        case unknown
        case available
        case unavailable(String)
    }

    let client: CUPSClient
    let queue: String?
    private let queueLabel: String
    private let timers = DispatchQueue(label: "printer-availability")

    private struct Inner {
        var state: State = .unknown
        var waiting: [@Sendable () -> Void] = []
        var probing = false
        var observers: [@Sendable (State) -> Void] = []
    }

    private let inner = Mutex(Inner())

    init(client: CUPSClient, queue: String?) {
        self.client = client
        self.queue = queue
        self.queueLabel = queue.map { "queue \"\($0)\"" } ?? "the default CUPS destination"
    }

    var state: State { inner.withLock { $0.state } }

    func observe(_ observer: @escaping @Sendable (State) -> Void) {
        inner.withLock { $0.observers.append(observer) }
    }

    /// Asks CUPS now and updates the cached state.
    @discardableResult
    func check() -> State {
        let new: State
        do {
            let status = try client.printerStatus(queue: queue)
            if !status.exists {
                new = .unavailable("CUPS at \(client.server) has no queue named \"\(status.queue)\"; create it (lpadmin) or correct print.printer")
            } else if !status.accepting {
                new = .unavailable("\(queueLabel) is not accepting jobs\(status.stateMessage.map { " (\($0))" } ?? ""); run cupsaccept \(status.queue) when it may print again")
            } else if status.state == .stopped {
                new = .unavailable("the printer \(status.queue) is stopped\(status.stateMessage.map { ": \($0)" } ?? ""); run cupsenable \(status.queue) once it is fixed")
            } else {
                new = .available
            }
        } catch let error as CUPSError {
            switch error {
            case .serverUnreachable:
                new = .unavailable("cupsd is not reachable at \(client.server); start CUPS or correct cups-server")
            case .noDefaultQueue:
                new = .unavailable("CUPS at \(client.server) has no default destination; set one (lpadmin -d) or give print.printer")
            default:
                new = .unavailable("cannot ask CUPS about \(queueLabel): \(error)")
            }
        } catch {
            new = .unavailable("cannot ask CUPS about \(queueLabel): \(error)")
        }
        set(new)
        return new
    }

    func set(_ new: State) {
        let (observers, resumed) = inner.withLock { s -> ([@Sendable (State) -> Void], [@Sendable () -> Void]) in
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

    /// Parks a document until the printer is available; `resume` runs then.
    func waitUntilAvailable(_ resume: @escaping @Sendable () -> Void) {
        let startProbe = inner.withLock { s -> Bool in
            s.waiting.append(resume)
            defer { s.probing = true }
            return !s.probing
        }
        if startProbe { probe(after: 0.5) }
    }

    /// Documents waiting for the printer.
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
            // Resumed documents may have raced in after `check`: hand them on too.
            if state == .available {
                let late = inner.withLock { s -> [@Sendable () -> Void] in
                    defer { s.waiting.removeAll() }
                    return s.waiting
                }
                for r in late { r() }
            }
            if again { probe(after: min(delay * 2, 15)) }
        }
    }
}
