import Foundation

/// Whether a print destination can take jobs now, and if not, why (seed 002's
/// feature source for the printer: cupsd reachable, queue exists, accepting,
/// not stopped). It caches its answer, tells observers when it changes, and
/// while it says no it probes CUPS with backoff and resumes the documents that
/// wait for it once the printer is back.
final class PrinterAvailability: ProbedSource, @unchecked Sendable {
    typealias State = Availability

    let client: CUPSClient
    let queue: String?
    private let queueLabel: String

    init(client: CUPSClient, queue: String?) {
        self.client = client
        self.queue = queue
        self.queueLabel = queue.map { "queue \"\($0)\"" } ?? "the default CUPS destination"
        super.init(sourceName: "printer")
    }

    override func probe() -> Availability {
        do {
            let status = try client.printerStatus(queue: queue)
            if !status.exists {
                return .unavailable("CUPS at \(client.server) has no queue named \"\(status.queue)\"; create it (lpadmin) or correct print.printer")
            } else if !status.accepting {
                return .unavailable("\(queueLabel) is not accepting jobs\(status.stateMessage.map { " (\($0))" } ?? ""); run cupsaccept \(status.queue) when it may print again")
            } else if status.state == .stopped {
                return .unavailable("the printer \(status.queue) is stopped\(status.stateMessage.map { ": \($0)" } ?? ""); run cupsenable \(status.queue) once it is fixed")
            }
            return .available
        } catch let error as CUPSError {
            switch error {
            case .serverUnreachable:
                return .unavailable("cupsd is not reachable at \(client.server); start CUPS or correct cups-server")
            case .noDefaultQueue:
                return .unavailable("CUPS at \(client.server) has no default destination; set one (lpadmin -d) or give print.printer")
            default:
                return .unavailable("cannot ask CUPS about \(queueLabel): \(error)")
            }
        } catch {
            return .unavailable("cannot ask CUPS about \(queueLabel): \(error)")
        }
    }
}
