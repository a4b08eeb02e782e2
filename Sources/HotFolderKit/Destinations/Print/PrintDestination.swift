import Foundation

/// Delivers a staged PDF to a CUPS queue and follows the job to its end,
/// exactly once across restarts: the unique job name is journaled before the
/// submission and the CUPS job id as soon as CUPS returns it, so a restarted
/// service follows the job it already submitted instead of printing again.
struct PrintDestination {
    let sharing: SharingConfiguration
    let availability: PrinterAvailability
    let tracker: PrintTracker
    var client: CUPSClient { availability.client }

    enum Delivery {
        case printed(String)
        /// Submitted and followed, or waiting for the printer; `resume` runs
        /// the job again when there is news.
        case parked
    }

    func deliver(_ output: StagedOutput, job: JobFolder, values: [NameTemplate.Placeholder: String],
                 resume: @escaping @Sendable () -> Void,
                 waiting: @escaping @Sendable (String?) -> Void) throws(JobFailure) -> Delivery {
        let journal = job.journal
        if let printed = journal.last(.printed) { return .printed(printed.name ?? "printed") }
        if let failed = journal.last(.printFailed), let failure = failed.failure { throw failure }
        if let submitted = journal.last(.printSubmitted), let id = submitted.printJob {
            follow(id, job: job, resume: resume, waiting: waiting)
            return .parked
        }
        if let submitting = journal.last(.printSubmitting), let name = submitting.printJobName {
            // The service stopped between submitting and journaling CUPS's answer:
            // the job may exist; look for it by its unique name before printing again.
            do {
                for existing in try client.findJobs(named: name, queue: nil).reversed() {
                    switch existing.state {
                    case .completed, .processing, .stopped, .pending:
                        // It printed, is printing, or waits in the queue with its
                        // document: follow it, never print again.
                        try record(.printSubmitted, job: job) { $0.printJob = existing.id; $0.printJobName = name }
                        follow(existing.id, job: job, resume: resume, waiting: waiting)
                        return .parked
                    case .held:
                        // Held without its document (the service died mid-upload:
                        // "job-incoming"), such a job never ends: cancel it and
                        // submit anew, unless it started meanwhile.
                        try? client.cancel(job: existing.id)
                        if let now = try? client.jobStatus(id: existing.id), now.state == .processing || now.state == .completed {
                            try record(.printSubmitted, job: job) { $0.printJob = existing.id; $0.printJobName = name }
                            follow(existing.id, job: job, resume: resume, waiting: waiting)
                            return .parked
                        }
                    case .aborted, .cancelled:
                        continue
                    }
                }
            } catch {
                waiting("cannot look for the job submitted before the restart: \(error)")
                availability.waitUntilAvailable(resume)
                return .parked
            }
        }
        let state = availability.check()
        guard state == .available else {
            if case .unavailable(let why) = state { waiting(why) }
            availability.waitUntilAvailable(resume)
            return .parked
        }
        let name = Self.jobName(output.name ?? sharing.name.render(values), job: job.id)
        let id: Int32
        do {
            try record(.printSubmitting, job: job) { $0.printJobName = name }
            id = try client.submit(file: job.path(output.file), queue: sharing.printer, jobName: name, options: options(for: output))
        } catch let error as CUPSError {
            switch error {
            case .serverUnreachable, .noSuchQueue, .notAcceptingJobs, .noDefaultQueue:
                // Not the document's fault: it waits for the printer.
                availability.check()
                if case .unavailable(let why) = availability.state { waiting(why) }
                availability.waitUntilAvailable(resume)
                return .parked
            case .localFile(let path, _, let message):
                throw JobFailure(.print, "cannot read the generated file \(path): \(message)", remedy: "Check the service area's file system; the job is retried.", transient: true)
            default:
                if let status = error.ippStatus, status >= 0x0500 {
                    throw JobFailure(.print, "CUPS could not take the job: \(error)", remedy: "Check CUPS's error log; the job is retried.", transient: true)
                }
                throw JobFailure(.print, "CUPS refused the document: \(error)", remedy: "Check the print options of this folder and the document.")
            }
        } catch let error as SystemError {
            throw JobFailure(.print, "cannot write the job journal: \(error)", remedy: "Check free space in the drop folder's service area.", transient: true)
        } catch {
            throw JobFailure(.print, "\(error)", remedy: "Check CUPS.", transient: true)
        }
        do {
            try record(.printSubmitted, job: job) { $0.printJob = id; $0.printJobName = name }
        } catch {
            // CUPS has the job: following it by the name journaled before is still possible.
        }
        follow(id, job: job, resume: resume, waiting: waiting)
        return .parked
    }

    private func follow(_ id: Int32, job: JobFolder, resume: @escaping @Sendable () -> Void, waiting: @escaping @Sendable (String?) -> Void) {
        let submittedAt = job.journal.last(.printSubmitted)?.time ?? Date().timeIntervalSince1970
        let deadline = Date(timeIntervalSince1970: submittedAt + sharing.timeout)
        let queue = sharing.printer ?? "default"
        tracker.follow(key: job.id, client: client, id: id, deadline: deadline, onProblem: waiting) { ending in
            switch ending {
            case .completed(let printedOn):
                try? record(.printed, job: job) { $0.name = "\(printedOn ?? queue)#\(id)"; $0.printJob = id }
            case .failed(let reason):
                let failure = JobFailure(.print, reason, remedy: "Check the printer and CUPS's log (lpstat -l -p \(queue)); drop the document again to print it.")
                try? record(.printFailed, job: job) { $0.failure = failure; $0.printJob = id }
            case .lost(let reason):
                let failure = JobFailure(.print, reason, remedy: "Check whether the document came out of the printer; drop it again if not.")
                try? record(.printFailed, job: job) { $0.failure = failure; $0.printJob = id }
            }
            resume()
        }
    }

    private func record(_ event: JournalRecord.Event, job: JobFolder, _ fill: (inout JournalRecord) -> Void) throws(SystemError) {
        try job.journal.append(event, destination: .print, fill)
    }

    /// The CUPS options for this folder's print settings and the ticket's
    /// choices; page selection and annotations are already in the generated PDF.
    func options(for output: StagedOutput) -> [(String, String)] {
        var o: [(String, String)] = []
        let copies = output.copies ?? sharing.copies
        if copies != 1 { o.append(("copies", String(copies))) }
        if let s = output.sides ?? sharing.sides { o.append(("sides", s)) }
        if let m = sharing.media { o.append(("media", m)) }
        if let c = sharing.color { o.append(("print-color-mode", c)) }
        if let orientation = sharing.orientation {
            let value = ["portrait": "3", "landscape": "4", "reverse-landscape": "5", "reverse-portrait": "6"][orientation] ?? "3"
            o.append(("orientation-requested", value))
        }
        o += sharing.options.map { ($0.name, $0.value) }
        return o
    }

    /// A job name that is the configured name plus the job id, so that a
    /// restarted service can find its own job; IPP names hold 255 bytes.
    static func jobName(_ rendered: String, job: String) -> String {
        let suffix = " [\(job)]"
        let clean = FileNameSanitizer.cleanTitle(rendered)
        return FileNameSanitizer.truncate(clean.isEmpty ? "document" : clean, toUTF8Bytes: 255 - suffix.utf8.count) + suffix
    }
}
