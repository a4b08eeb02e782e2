import Foundation
import Glibc
import Synchronization

/// Pairs settled documents with their job tickets (`<document>.ticket`) before
/// they are claimed. A ticket is never a document: it waits for its document,
/// and goes wherever the document goes. A document whose ticket is still being
/// written waits for it; with `tickets = required` a document without one waits
/// up to `ticket-wait`, then fails with that reason. A ticket whose document
/// never comes fails on its own after `ticket-wait`.
final class TicketDesk: @unchecked Sendable {
    enum Decision: Equatable {
        /// Claim and run the document (its ticket, if any, is taken with it).
        case process(Candidate)
        /// Claim the document and fail it: its required ticket never came.
        case missingTicket(Candidate)
        /// Fail the ticket: no document came for it.
        case orphan(Candidate)
    }

    private struct State {
        /// Tickets that settled and wait for their document (by ticket path).
        var settled: Set<String> = []
        /// Documents that settled and wait for their ticket (by ticket path).
        var documents: [String: Candidate] = [:]
    }

    private let policy: TicketPolicy
    private let wait: Double
    private let state = Mutex(State())
    private let timers: DispatchQueue
    private let decide: @Sendable (Decision) -> Void
    /// Told when a document starts or stops waiting for its ticket (for `hotfolder status`).
    private let onWaiting = Mutex<(@Sendable (Candidate, String?) -> Void)?>(nil)

    func reportWaiting(to report: @escaping @Sendable (Candidate, String?) -> Void) {
        onWaiting.withLock { $0 = report }
    }

    private func waiting(_ document: Candidate, _ reason: String?) {
        onWaiting.withLock { $0 }?(document, reason)
    }

    init(policy: TicketPolicy, wait: Double, label: String, decide: @escaping @Sendable (Decision) -> Void) {
        self.policy = policy
        self.wait = wait
        self.timers = DispatchQueue(label: "tickets.\(label)")
        self.decide = decide
    }

    static func isTicket(_ name: String) -> Bool {
        name.hasSuffix(JobTicket.suffix) && name.utf8.count > JobTicket.suffix.utf8.count
    }

    static func ticketPath(of document: Candidate) -> String { document.path + JobTicket.suffix }

    static func document(of ticket: Candidate) -> Candidate {
        Candidate(directory: ticket.directory, name: String(ticket.name.dropLast(JobTicket.suffix.count)))
    }

    private static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// A file settled in the drop folder.
    func settled(_ candidate: Candidate) {
        if Self.isTicket(candidate.name) {
            ticketSettled(candidate)
        } else {
            documentSettled(candidate)
        }
    }

    private func ticketSettled(_ ticket: Candidate) {
        let document = Self.document(of: ticket)
        let waiting = state.withLock { s -> Candidate? in
            s.settled.insert(ticket.path)
            return s.documents.removeValue(forKey: ticket.path)
        }
        if let waiting {
            self.waiting(waiting, nil)
            decide(.process(waiting))
        } else if !Self.exists(document.path) || Self.isTicket(document.name) {
            // Its document may still come (written after its ticket); if it
            // does not, the ticket fails on its own.
            timers.asyncAfter(deadline: .now() + wait) { [weak self] in self?.checkOrphan(ticket) }
        }
    }

    private func checkOrphan(_ ticket: Candidate) {
        let document = Self.document(of: ticket)
        let orphan = state.withLock { s -> Bool in
            guard s.settled.contains(ticket.path) else { return false }
            guard Self.exists(ticket.path) else {
                s.settled.remove(ticket.path) // taken with its document (maybe by another instance), or removed
                return false
            }
            // A document still settling takes its ticket when it is ready.
            guard !Self.exists(document.path) || Self.isTicket(document.name) else { return false }
            s.settled.remove(ticket.path)
            return true
        }
        if orphan { decide(.orphan(ticket)) }
    }

    private func documentSettled(_ document: Candidate) {
        let ticketPath = Self.ticketPath(of: document)
        enum Next { case go, wait, waitForRequired }
        let next = state.withLock { s -> Next in
            if s.settled.contains(ticketPath) { return .go }
            if Self.exists(ticketPath) {
                // Its ticket is still being written: the ticket's settling brings the document.
                s.documents[ticketPath] = document
                return .wait
            }
            guard policy == .required else { return .go }
            s.documents[ticketPath] = document
            return .waitForRequired
        }
        guard next != .go else {
            decide(.process(document))
            return
        }
        waiting(document, next == .wait ? "its job ticket is still being written" : "waits for its job ticket \(document.name)\(JobTicket.suffix) (tickets = required, up to ticket-wait)")
        // A ticket being written may also be deleted instead of finished: the
        // document does not wait beyond ticket-wait either way.
        timers.asyncAfter(deadline: .now() + wait) { [weak self] in
            guard let self else { return }
            let still = self.state.withLock { $0.documents[ticketPath] == document ? $0.documents.removeValue(forKey: ticketPath) : nil }
            guard let still else { return }
            self.waiting(still, nil)
            let ticketCame = self.state.withLock { $0.settled.contains(ticketPath) } || Self.exists(ticketPath)
            self.decide(self.policy == .required && !ticketCame ? .missingTicket(still) : .process(still))
        }
    }

    /// The ticket went with its document into a job.
    func taken(_ ticketPath: String) {
        state.withLock { _ = $0.settled.remove(ticketPath) }
    }

    /// Documents that wait for their ticket (for status).
    var waitingDocuments: [Candidate] { state.withLock { Array($0.documents.values) } }
}
