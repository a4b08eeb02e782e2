import Foundation
import Synchronization

/// Follows submitted CUPS jobs until CUPS says they are finished. It asks CUPS
/// only while it follows jobs (every half second); with nothing to follow it
/// does nothing at all.
final class PrintTracker: @unchecked Sendable {
    enum Ending: Sendable {
        /// Printed; the queue CUPS printed it on.
        case completed(queue: String?)
        case failed(String)
        /// CUPS no longer knows the job (its history was purged); whether it
        /// printed cannot be told, so it is neither reprinted nor called done.
        case lost(String)
    }

    struct Followed {
        let client: CUPSClient
        let id: Int32
        let deadline: Date
        let onEnd: @Sendable (Ending) -> Void
        let onProblem: @Sendable (String?) -> Void
    }

    private let queue = DispatchQueue(label: "print-tracker")
    private let followed = Mutex<[String: Followed]>([:])
    private let polling = Mutex(false)
    let interval: Double

    init(interval: Double = 0.5) { self.interval = interval }

    /// Follows CUPS job `id`; `onEnd` runs once when it ends or its deadline passes.
    /// `onProblem` reports (once per change) why the job is not progressing.
    func follow(key: String, client: CUPSClient, id: Int32, deadline: Date,
                onProblem: @escaping @Sendable (String?) -> Void,
                onEnd: @escaping @Sendable (Ending) -> Void) {
        followed.withLock { $0[key] = Followed(client: client, id: id, deadline: deadline, onEnd: onEnd, onProblem: onProblem) }
        let start = polling.withLock { p -> Bool in
            defer { p = true }
            return !p
        }
        if start { schedule(after: 0.05) }
    }

    var count: Int { followed.withLock { $0.count } }

    func stopAll() { followed.withLock { $0.removeAll() } }

    private func schedule(after delay: Double) {
        queue.asyncAfter(deadline: .now() + delay) { [self] in poll() }
    }

    private func poll() {
        let jobs = followed.withLock { $0 }
        // One request per server for every job still running; a job is asked
        // about on its own only when it left that list (it ended) or looks
        // stopped or held, where the reason and CUPS's message matter.
        var unfinished: [String: [Int32: (state: CUPSJobState, reasons: [String])]] = [:]
        for client in Set(jobs.values.map(\.client.server)) {
            guard let any = jobs.values.first(where: { $0.client.server == client })?.client else { continue }
            unfinished[client] = try? any.unfinishedJobs()
        }
        for (key, job) in jobs {
            if let running = unfinished[job.client.server]?[job.id],
               running.state == .pending || running.state == .processing,
               !running.reasons.contains("printer-stopped") {
                job.onProblem(nil)
                if Date() < job.deadline { continue }
            }
            guard let ending = check(job) else { continue }
            let removed = followed.withLock { $0.removeValue(forKey: key) }
            if removed != nil { job.onEnd(ending) }
        }
        let more = polling.withLock { p -> Bool in
            let any = followed.withLock { !$0.isEmpty }
            p = any
            return any
        }
        if more { schedule(after: interval) }
    }

    private func check(_ job: Followed) -> Ending? {
        let status: CUPSJobStatus
        do {
            status = try job.client.jobStatus(id: job.id)
        } catch let error as CUPSError {
            if case .noSuchJob = error {
                return .lost("CUPS no longer knows job \(job.id); it may or may not have printed, so it is not printed again")
            }
            job.onProblem("cannot ask CUPS about job \(job.id): \(error)")
            return timedOut(job)
        } catch {
            job.onProblem("cannot ask CUPS about job \(job.id): \(error)")
            return timedOut(job)
        }
        let cupsReason = Self.reason(status)
        switch status.state {
        case .completed:
            return .completed(queue: status.queue)
        case .cancelled:
            return .failed("CUPS job \(job.id) was cancelled\(cupsReason)")
        case .aborted:
            return .failed("CUPS job \(job.id) was aborted\(cupsReason)")
        case .held where status.stateReasons.contains(where: Self.isErrorReason):
            cancel(job)
            return .failed("CUPS job \(job.id) was held after an error\(cupsReason)")
        case .stopped where status.stateReasons.contains(where: Self.isErrorReason):
            cancel(job)
            return .failed("CUPS job \(job.id) stopped after an error\(cupsReason)")
        case .pending, .held, .processing, .stopped:
            if status.stateReasons.contains("printer-stopped") {
                job.onProblem("CUPS job \(job.id) waits: its printer is stopped\(cupsReason)")
            } else {
                job.onProblem(nil)
            }
            return timedOut(job)
        }
    }

    private func timedOut(_ job: Followed) -> Ending? {
        guard Date() >= job.deadline else { return nil }
        cancel(job)
        return .failed("CUPS job \(job.id) did not complete before print.timeout; it was cancelled")
    }

    private func cancel(_ job: Followed) {
        try? job.client.cancel(job: job.id)
    }

    static func isErrorReason(_ reason: String) -> Bool {
        ["document-format-error", "document-unprintable-error", "job-canceled-at-device", "aborted-by-system",
         "compression-error", "document-access-error", "processing-to-stop-point"].contains(reason)
            || reason.hasSuffix("-error")
    }

    /// CUPS's own words: the job's printer-state message, else its reasons.
    static func reason(_ status: CUPSJobStatus) -> String {
        if let message = status.printerStateMessage, !message.isEmpty { return ": \(message)" }
        let reasons = status.stateReasons.filter { $0 != "none" }
        return reasons.isEmpty ? "" : " (\(reasons.joined(separator: ", ")))"
    }
}
