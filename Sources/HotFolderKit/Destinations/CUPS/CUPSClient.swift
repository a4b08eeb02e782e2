import CCUPS
import Foundation
import Glibc

/// A client of one CUPS server. Every call opens its own connection (`httpConnect2`),
/// runs synchronously on the calling thread and closes it, so a `CUPSClient` can be
/// shared freely between threads and tasks. All errors thrown are `CUPSError`.
public struct CUPSClient: Sendable {
    /// The server as given or resolved: a domain socket path (beginning with "/")
    /// or host[:port].
    public let server: String
    /// Connection timeout for httpConnect2, in milliseconds.
    public let timeoutMilliseconds: Int32

    /// - Parameter server: nil means the `CUPS_SERVER` environment variable, else
    ///   libcups' default (`cupsServer()`: client.conf, /run/cups/cups.sock, localhost).
    public init(server: String? = nil, timeoutMilliseconds: Int32 = 10_000) {
        if let server, !server.isEmpty {
            self.server = server
        } else if let fromEnvironment = ProcessInfo.processInfo.environment["CUPS_SERVER"], !fromEnvironment.isEmpty {
            self.server = fromEnvironment
        } else if let fromLibrary = cupsServer() {
            self.server = String(cString: fromLibrary)
        } else {
            self.server = "localhost"
        }
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    // MARK: Jobs

    /// Submits `file` as one job and returns its job id once cupsd holds the whole document.
    ///
    /// IPP Create-Job (with `options` encoded by cupsAddOption/cupsEncodeOptions2, e.g.
    /// `("sides", "two-sided-long-edge")`, `("media", "A4")`, `("copies", "2")`), then
    /// Send-Document streaming the file (cupsStartDocument/cupsWriteRequestData/
    /// cupsFinishDocument). The format is application/pdf when the file starts with
    /// "%PDF-", otherwise cupsd auto-types it. If sending the document fails, the
    /// created job is cancelled.
    ///
    /// - Parameter queue: nil means the server's default destination (`.noDefaultQueue` if none).
    /// - Throws: `.localFile` (before contacting cupsd), `.serverUnreachable`,
    ///   `.noSuchQueue`, `.notAcceptingJobs`, `.noDefaultQueue`, `.ipp`.
    public func submit(file: String, queue: String?, jobName: String, options: [(String, String)] = []) throws -> Int32 {
        let document = try LocalDocument(path: file)
        let jobID: Int32 = try withConnection { connection in
            let target = try Self.resolve(queue, connection)
            let jobID = try Self.createJob(connection, queue: target, jobName: jobName, options: options)
            do {
                try Self.sendDocument(connection, queue: target, jobID: jobID, document: document)
            } catch {
                // A job whose document never arrived would wait for ever; the
                // connection may be unusable, so cancel on a new one.
                try? cancel(job: jobID)
                throw error
            }
            return jobID
        }
        return jobID
    }

    /// The job's current state (IPP Get-Job-Attributes). Throws `.noSuchJob` when
    /// cupsd does not know the id.
    public func jobStatus(id: Int32) throws -> CUPSJobStatus {
        try withConnection { connection in
            try Self.jobStatus(connection, id: id)
        }
    }

    /// Every job (pending, active and finished: `which-jobs=all`) whose job-name is
    /// `named`, oldest first, on `queue` or on all queues when nil. Finished jobs are
    /// found while cupsd keeps them (PreserveJobHistory, MaxJobs).
    public func findJobs(named: String, queue: String? = nil) throws -> [CUPSJob] {
        try withConnection { connection in
            guard let request = IPPMessage.request(IPP_OP_GET_JOBS) else {
                throw Self.buildError("Get-Jobs", connection)
            }
            let target: CUPSConnection.Target = queue.map { .queue($0) } ?? .server
            request.add(name: "printer-uri", tag: IPP_TAG_URI, value: queue.map(Self.printerURI) ?? "ipp://localhost/")
            request.add(name: "which-jobs", tag: IPP_TAG_KEYWORD, value: "all")
            request.add(name: "my-jobs", boolean: false)
            // Only attributes cupsd has in memory: asking for more (e.g.
            // job-printer-state-message) makes it cap the answer at 500 jobs.
            request.add(name: "requested-attributes", tag: IPP_TAG_KEYWORD, values: ["job-id", "job-name"])
            let response = try connection.perform(
                request, resource: queue.map { "/printers/\($0)" } ?? "/jobs/", operation: "Get-Jobs", target: target
            )
            let ids = response.groups(IPP_TAG_JOB).compactMap { attributes -> Int32? in
                guard IPPAttribute.string(attributes["job-name"]) == named else { return nil }
                return IPPAttribute.integer(attributes["job-id"])
            }
            var jobs: [CUPSJob] = []
            for id in ids.sorted() {
                let status: CUPSJobStatus
                do {
                    status = try Self.jobStatus(connection, id: id)
                } catch CUPSError.noSuchJob {
                    continue  // purged meanwhile
                }
                jobs.append(CUPSJob(id: id, name: status.name ?? named, queue: status.queue, status: status))
            }
            return jobs
        }
    }

    /// The jobs that have not ended (pending, held, processing, stopped) on
    /// every queue, with their state and reasons, in one Get-Jobs request: a
    /// follower of many jobs asks once per poll instead of once per job.
    public func unfinishedJobs() throws -> [Int32: (state: CUPSJobState, reasons: [String])] {
        try withConnection { connection in
            guard let request = IPPMessage.request(IPP_OP_GET_JOBS) else {
                throw Self.buildError("Get-Jobs", connection)
            }
            request.add(name: "printer-uri", tag: IPP_TAG_URI, value: "ipp://localhost/")
            request.add(name: "which-jobs", tag: IPP_TAG_KEYWORD, value: "not-completed")
            request.add(name: "my-jobs", boolean: false)
            request.add(name: "requested-attributes", tag: IPP_TAG_KEYWORD, values: ["job-id", "job-state", "job-state-reasons"])
            let response = try connection.perform(request, resource: "/jobs/", operation: "Get-Jobs", target: .server)
            var jobs: [Int32: (state: CUPSJobState, reasons: [String])] = [:]
            for attributes in response.groups(IPP_TAG_JOB) {
                guard let id = IPPAttribute.integer(attributes["job-id"]),
                      let state = IPPAttribute.integer(attributes["job-state"]).flatMap(CUPSJobState.init(rawValue:)) else { continue }
                jobs[id] = (state, IPPAttribute.strings(attributes["job-state-reasons"]))
            }
            return jobs
        }
    }

    /// Cancels a job (IPP Cancel-Job). Throws `.noSuchJob` for an unknown id and
    /// `.ipp` with 0x0404 client-error-not-possible for a job already finished.
    public func cancel(job id: Int32) throws {
        try withConnection { connection in
            guard let request = IPPMessage.request(IPP_OP_CANCEL_JOB) else {
                throw Self.buildError("Cancel-Job", connection)
            }
            request.add(name: "job-uri", tag: IPP_TAG_URI, value: "ipp://localhost/jobs/\(id)")
            _ = try connection.perform(request, resource: "/jobs/", operation: "Cancel-Job", target: .job(id))
        }
    }

    // MARK: Queues

    /// The queue's state (IPP Get-Printer-Attributes). A queue cupsd does not know
    /// gives `exists == false`; an unreachable cupsd throws `.serverUnreachable`.
    /// - Parameter queue: nil means the server's default destination (`.noDefaultQueue` if none).
    public func printerStatus(queue: String?) throws -> CUPSPrinterStatus {
        try withConnection { connection in
            let target = try Self.resolve(queue, connection)
            guard let request = IPPMessage.request(IPP_OP_GET_PRINTER_ATTRIBUTES) else {
                throw Self.buildError("Get-Printer-Attributes", connection)
            }
            request.add(name: "printer-uri", tag: IPP_TAG_URI, value: Self.printerURI(target))
            request.add(name: "requested-attributes", tag: IPP_TAG_KEYWORD, values: [
                "printer-name", "printer-state", "printer-state-reasons", "printer-state-message",
                "printer-is-accepting-jobs",
            ])
            let response: IPPMessage
            do {
                response = try connection.perform(
                    request, resource: "/printers/\(target)", operation: "Get-Printer-Attributes", target: .queue(target)
                )
            } catch CUPSError.noSuchQueue {
                return .missing(target)
            }
            let message = IPPAttribute.string(response.attribute("printer-state-message"))
            return CUPSPrinterStatus(
                queue: IPPAttribute.string(response.attribute("printer-name")) ?? target,
                exists: true,
                accepting: IPPAttribute.boolean(response.attribute("printer-is-accepting-jobs")) ?? false,
                state: IPPAttribute.integer(response.attribute("printer-state")).flatMap(CUPSPrinterState.init(rawValue:)),
                stateReasons: IPPAttribute.strings(response.attribute("printer-state-reasons")),
                stateMessage: message?.isEmpty == false ? message : nil
            )
        }
    }

    /// The server's default destination (IPP CUPS-Get-Default), nil if it has none.
    /// Unlike cupsGetDefault2, this ignores LPDEST, PRINTER and lpoptions.
    public func defaultQueue() throws -> String? {
        try withConnection { connection in
            try Self.defaultQueue(connection)
        }
    }

    // MARK: Implementation

    private func withConnection<T>(_ body: (CUPSConnection) throws -> T) throws -> T {
        let connection = try CUPSConnection.open(server: server, timeoutMilliseconds: timeoutMilliseconds)
        return try body(connection)
    }

    static func printerURI(_ queue: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#")
        let escaped = queue.addingPercentEncoding(withAllowedCharacters: allowed) ?? queue
        return "ipp://localhost/printers/\(escaped)"
    }

    /// The queue name in a job-printer-uri ("ipp://host/printers/NAME" or ".../classes/NAME").
    static func queueName(fromURI uri: String) -> String? {
        for marker in ["/printers/", "/classes/"] {
            if let range = uri.range(of: marker, options: .backwards) {
                let name = String(uri[range.upperBound...])
                guard !name.isEmpty else { return nil }
                return name.removingPercentEncoding ?? name
            }
        }
        return nil
    }

    static func buildError(_ operation: String, _ connection: CUPSConnection) -> CUPSError {
        .ipp(
            operation: operation, target: "server", server: connection.server,
            status: CUPSConnection.code(IPP_STATUS_ERROR_INTERNAL),
            statusName: CUPSConnection.name(IPP_STATUS_ERROR_INTERNAL),
            message: "could not allocate the IPP request"
        )
    }

    /// `queue`, or the server's default destination.
    static func resolve(_ queue: String?, _ connection: CUPSConnection) throws -> String {
        if let queue { return queue }
        guard let fallback = try defaultQueue(connection) else {
            throw CUPSError.noDefaultQueue(server: connection.server)
        }
        return fallback
    }

    static func defaultQueue(_ connection: CUPSConnection) throws -> String? {
        guard let request = IPPMessage.request(IPP_OP_CUPS_GET_DEFAULT) else {
            throw buildError("CUPS-Get-Default", connection)
        }
        request.add(name: "requested-attributes", tag: IPP_TAG_KEYWORD, values: ["printer-name"])
        do {
            let response = try connection.perform(request, resource: "/", operation: "CUPS-Get-Default", target: .server)
            return IPPAttribute.string(response.attribute("printer-name"))
        } catch let error as CUPSError {
            // cupsd answers client-error-not-found "No default printer."
            if case .ipp(_, _, _, let status, _, _) = error,
               status == CUPSConnection.code(IPP_STATUS_ERROR_NOT_FOUND) {
                return nil
            }
            throw error
        }
    }

    static func createJob(
        _ connection: CUPSConnection, queue: String, jobName: String, options: [(String, String)]
    ) throws -> Int32 {
        guard let request = IPPMessage.request(IPP_OP_CREATE_JOB), let ipp = request.ipp else {
            throw buildError("Create-Job", connection)
        }
        request.add(name: "printer-uri", tag: IPP_TAG_URI, value: printerURI(queue))
        request.add(name: "job-name", tag: IPP_TAG_NAME, value: jobName)
        var count: Int32 = 0
        var list: UnsafeMutablePointer<cups_option_t>?
        for (name, value) in options {
            count = cupsAddOption(name, value, count, &list)
        }
        defer { cupsFreeOptions(count, list) }
        cupsEncodeOptions2(ipp, count, list, IPP_TAG_OPERATION)
        cupsEncodeOptions2(ipp, count, list, IPP_TAG_JOB)
        let response = try connection.perform(
            request, resource: "/printers/\(queue)", operation: "Create-Job", target: .queue(queue)
        )
        guard let id = IPPAttribute.integer(response.attribute("job-id")), id > 0 else {
            throw CUPSError.ipp(
                operation: "Create-Job", target: "queue \"\(queue)\"", server: connection.server,
                status: CUPSConnection.code(IPP_STATUS_ERROR_INTERNAL),
                statusName: CUPSConnection.name(IPP_STATUS_ERROR_INTERNAL),
                message: "the response has no job-id"
            )
        }
        return id
    }

    static func sendDocument(_ connection: CUPSConnection, queue: String, jobID: Int32, document: LocalDocument) throws {
        let http = connection.http
        let target = CUPSConnection.Target.queue(queue)
        let started = cupsStartDocument(http, queue, jobID, document.name, document.format, 1)
        guard started == HTTP_STATUS_CONTINUE else {
            let status = cupsLastError()
            throw connection.classify(
                status: status, message: CUPSConnection.lastErrorString(status), operation: "Send-Document",
                target: target, transportFailed: true, transportError: httpError(http)
            )
        }
        var writeFailed = false
        try document.forEachChunk { chunk in
            guard !writeFailed, let base = chunk.baseAddress else { return }
            let written = cupsWriteRequestData(http, base.assumingMemoryBound(to: CChar.self), chunk.count)
            if written != HTTP_STATUS_CONTINUE {
                // cupsd answered early (an error) or the connection broke:
                // cupsFinishDocument reads the answer.
                writeFailed = true
            }
        }
        let transportError = httpError(http)
        let status = cupsFinishDocument(http, queue)
        let message = CUPSConnection.lastErrorString(status)
        guard CUPSConnection.isSuccess(status), !writeFailed else {
            let error = transportError != 0 ? transportError : httpError(http)
            throw connection.classify(
                status: status, message: message, operation: "Send-Document", target: target,
                transportFailed: error != 0, transportError: error
            )
        }
    }

    static let jobAttributes = [
        "job-id", "job-name", "job-state", "job-state-reasons", "job-printer-state-message", "job-printer-uri",
        "job-originating-user-name", "time-at-creation", "time-at-completed",
    ]

    static func jobStatus(_ connection: CUPSConnection, id: Int32) throws -> CUPSJobStatus {
        guard let request = IPPMessage.request(IPP_OP_GET_JOB_ATTRIBUTES) else {
            throw buildError("Get-Job-Attributes", connection)
        }
        request.add(name: "job-uri", tag: IPP_TAG_URI, value: "ipp://localhost/jobs/\(id)")
        request.add(name: "requested-attributes", tag: IPP_TAG_KEYWORD, values: jobAttributes)
        let response = try connection.perform(
            request, resource: "/jobs/", operation: "Get-Job-Attributes", target: .job(id)
        )
        let attributes = response.groups(IPP_TAG_JOB).first ?? [:]
        guard let stateValue = IPPAttribute.integer(attributes["job-state"]),
              let state = CUPSJobState(rawValue: stateValue) else {
            throw CUPSError.ipp(
                operation: "Get-Job-Attributes", target: "job \(id)", server: connection.server,
                status: CUPSConnection.code(IPP_STATUS_ERROR_INTERNAL),
                statusName: CUPSConnection.name(IPP_STATUS_ERROR_INTERNAL),
                message: "the response has no valid job-state"
            )
        }
        let message = IPPAttribute.string(attributes["job-printer-state-message"])
        func date(_ name: String) -> Date? {
            guard let seconds = IPPAttribute.integer(attributes[name]), seconds > 0 else { return nil }
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        return CUPSJobStatus(
            id: IPPAttribute.integer(attributes["job-id"]) ?? id,
            state: state,
            stateReasons: IPPAttribute.strings(attributes["job-state-reasons"]),
            printerStateMessage: message?.isEmpty == false ? message : nil,
            name: IPPAttribute.string(attributes["job-name"]),
            queue: IPPAttribute.string(attributes["job-printer-uri"]).flatMap(queueName(fromURI:)),
            user: IPPAttribute.string(attributes["job-originating-user-name"]),
            createdAt: date("time-at-creation"),
            completedAt: date("time-at-completed")
        )
    }
}
