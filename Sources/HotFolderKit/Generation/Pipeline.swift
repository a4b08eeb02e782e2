import Foundation
import Glibc

/// What the pipeline learned about a document.
public struct DocumentFacts: Sendable, Codable, Equatable {
    public var type: ContentType
    public var pages: Int = 0
    public var title: String?
    public var encrypted = false
    public var allowPrint = true
    public var allowPrintHighResolution = true
    public var annotations = 0
    public var signed = false
}

/// One generated file waiting in the job folder for its destination.
public struct StagedOutput: Sendable, Codable, Equatable {
    public var destination: DestinationKind
    /// File name inside the job's `out` folder.
    public var file: String
    public var format: FileFormat
    public var pages: String
    public var annotations: AnnotationOption
    /// Extension of the delivered file, without the dot.
    public var ext: String
    public var pageCount: Int
}

public struct PipelineResult: Sendable, Codable, Equatable {
    public var facts: DocumentFacts
    public var outputs: [StagedOutput]
    public var warnings: [String]
}

/// The generation pipeline: (claimed original, folder configuration) → staged
/// files + warnings. It keeps no state between documents, so it can run in the
/// service, in a test, or in a worker process.
public struct Pipeline {
    public let folder: FolderConfiguration
    /// Holds the original in `in/` and receives outputs in `out/`.
    public let job: JobFolder
    public let now: Date
    /// The folder's counter value for this document ({n}).
    public let number: Int?

    public init(folder: FolderConfiguration, job: JobFolder, now: Date = Date(), number: Int? = nil) {
        self.folder = folder
        self.job = job
        self.now = now
        self.number = number
    }

    public func run() throws(JobFailure) -> PipelineResult {
        let name = job.originalName
        // The type is checked before opening (opening a device can have effects)
        // and again on the descriptor (the name could be swapped in between).
        if let before = try? job.input.status(name), let problem = Self.notARegularFile(before) {
            throw JobFailure(.identify, "\"\(name)\" is \(problem); only regular files are documents", remedy: "Drop a regular file.")
        }
        let input: FileDescriptor
        do {
            input = try job.input.openForReading(name)
        } catch {
            if error.errno == ELOOP {
                throw JobFailure(.identify, "\"\(name)\" is a symbolic link; only regular files are documents", remedy: "Drop the file itself, not a link to it.")
            }
            throw JobFailure(.identify, "cannot open the file: \(error)", remedy: "Check that the service may read the file, then drop it again.")
        }
        let st: stat
        let prefix: [UInt8]
        do {
            st = try input.stat()
            if let problem = Self.notARegularFile(st) {
                throw JobFailure(.identify, "\"\(name)\" is \(problem); only regular files are documents", remedy: "Drop a regular file.")
            }
            if st.st_nlink > 1 {
                // Another name of the same file may lie outside the drop folder,
                // somewhere the person who dropped it could not read.
                throw JobFailure(.identify, "\"\(name)\" is a hard link (the file has \(st.st_nlink) names); hard-linked files are not taken as documents", remedy: "Drop a copy of the file instead of a link to it.")
            }
            if Int64(st.st_size) > folder.maxFileSize {
                throw JobFailure(.identify, "the file is \(Self.bytes(Int64(st.st_size))), more than this folder's max-file-size of \(Self.bytes(folder.maxFileSize))", remedy: "Drop a smaller file, or raise max-file-size for this folder.")
            }
            prefix = try input.readPrefix(1024)
        } catch let error as SystemError {
            throw JobFailure(.identify, "cannot read the file: \(error)", remedy: "Check the file and drop it again.")
        } catch let failure as JobFailure {
            throw failure
        } catch {
            throw JobFailure(.identify, "\(error)", remedy: "Drop the file again.")
        }
        let type = ContentType.identify(prefix: prefix, size: Int(st.st_size))
        var facts = DocumentFacts(type: type)
        guard type == .pdf else {
            // The seed's default for a document that is not a PDF: its original,
            // where the destination allows `original`; an empty file never.
            guard type != .empty, folder.destinations.allSatisfy({ $0.fileFormats.contains(.original) }) else {
                throw Self.notAPDF(type, name: name)
            }
            let outputs = try folder.destinations.map { sharing throws(JobFailure) in try stageOriginal(input, sharing: sharing, pages: "all") }
            return PipelineResult(facts: facts, outputs: outputs, warnings: [])
        }

        var warnings: [String] = []
        var document = try open(input)
        do {
            let info = try document.info()
            facts.pages = info.pages
            facts.title = try document.title()
            facts.encrypted = info.encrypted
            facts.allowPrint = info.allowPrintLowResolution || info.allowPrintHighResolution
            facts.allowPrintHighResolution = info.allowPrintHighResolution
            facts.annotations = info.annotations
            facts.signed = info.signed
        } catch {
            throw Self.damaged(error)
        }
        guard facts.pages > 0 else {
            throw JobFailure(.open, "the PDF has no pages", remedy: "Drop a PDF that has at least one page.")
        }

        var outputs: [StagedOutput] = []
        var documentIsPristine = true
        for sharing in folder.destinations {
            let options = try resolveOptions(sharing, facts: facts)
            if sharing.destination == .print {
                guard facts.allowPrint else {
                    throw JobFailure(.print, "the PDF's permissions forbid printing", remedy: "Ask the author for a copy that may be printed.")
                }
                if !facts.allowPrintHighResolution {
                    warnings.append("the PDF allows only low-resolution printing")
                }
            }
            if options.format == .original {
                outputs.append(try stageOriginal(input, sharing: sharing, pages: "all"))
                continue
            }
            if !documentIsPristine {
                // Generation changes the open document: each destination starts anew.
                warnings += document.warnings
                document = try open(input)
            }
            documentIsPristine = false
            let indexes = try pageIndexes(options.pages, document: document, facts: facts, sharing: sharing)
            let title = sharing.title.map { FileNameSanitizer.cleanTitle($0.render(templateValues(facts))) }
            let file = JobFolder.outputName(sharing.destination, ext: "pdf")
            do {
                // Not synced here: the destination makes it durable (in a group
                // commit) before it is published under its final name.
                let output = try job.output.createFile(file)
                try document.generate(pages: indexes.count == facts.pages ? nil : indexes, annotations: options.annotations.mode, title: title, output: output)
            } catch let error as PDFError {
                if error.kind == .outOfMemory { throw Self.outOfMemory }
                throw JobFailure(.generate, "the PDF engine could not write the result: \(error.message)", remedy: "Open the document in a PDF viewer, save or print it to a new PDF, and drop that.")
            } catch let error as SystemError {
                throw JobFailure(.generate, "cannot write the result: \(error)", remedy: "Check free space and permissions of \(folder.serviceArea).", transient: error.isTransient)
            } catch {
                throw JobFailure(.generate, "\(error)", remedy: "Drop the document again.")
            }
            if facts.signed && options.annotations != .embed {
                warnings.append("the document is digitally signed; the generated copy no longer carries a valid signature")
            }
            outputs.append(StagedOutput(destination: sharing.destination, file: file, format: .pdf, pages: options.pages.description,
                                        annotations: options.annotations, ext: "pdf", pageCount: indexes.count))
        }
        warnings += document.warnings
        return PipelineResult(facts: facts, outputs: outputs, warnings: Self.unique(warnings))
    }

    struct ResolvedOptions {
        var format: FileFormat
        var pages: PageSelection
        var annotations: AnnotationOption
    }

    /// Option sanitization (seed 000): the first allowed option that survives
    /// the rules for this document becomes the one used.
    func resolveOptions(_ sharing: SharingConfiguration, facts: DocumentFacts) throws(JobFailure) -> ResolvedOptions {
        guard let format = sharing.fileFormats.first, let annotations = sharing.annotationOptions.first,
              var pages = sharing.pageSelections.first else {
            throw JobFailure(.options, "the \(sharing.destination.rawValue) configuration allows no option in some category", remedy: "Allow at least one format, page selection and annotation option.")
        }
        // A single-page document has no other selection than all of it.
        if facts.pages == 1 { pages = .all }
        return ResolvedOptions(format: format, pages: pages, annotations: annotations)
    }

    func pageIndexes(_ selection: PageSelection, document: PDFDocument, facts: DocumentFacts, sharing: SharingConfiguration) throws(JobFailure) -> [Int] {
        var annotated: [Int] = []
        if selection == .annotated {
            do {
                for page in 0..<facts.pages where try document.annotationCount(page: page) > 0 { annotated.append(page) }
            } catch {
                throw JobFailure(.open, "cannot read the annotations: \(error.message)", remedy: "Save the document anew in a PDF viewer and drop it again.")
            }
        }
        let indexes = selection.pageIndexes(pageCount: facts.pages) { annotated }
        let key = "\(sharing.destination.rawValue).pages"
        guard !indexes.isEmpty else {
            if selection == .annotated {
                throw JobFailure(.options, "\(key) = annotated, but no page of this document carries annotations", remedy: "Drop an annotated document, or allow another page selection in \(key) (e.g. annotated, all).")
            }
            throw JobFailure(.options, "\(key) = \(selection) selects no page of this \(facts.pages)-page document", remedy: "Drop a document that has those pages, or change \(key).")
        }
        return indexes
    }

    func stageOriginal(_ input: FileDescriptor, sharing: SharingConfiguration, pages: String) throws(JobFailure) -> StagedOutput {
        let (_, ext) = FileNameSanitizer.split(job.originalName)
        let file = JobFolder.outputName(sharing.destination, ext: "original")
        do {
            let output = try job.output.createFile(file)
            try output.copyContents(of: input)
        } catch {
            throw JobFailure(.generate, "cannot copy the original: \(error)", remedy: "Check free space and permissions of \(folder.serviceArea).", transient: error.isTransient)
        }
        return StagedOutput(destination: sharing.destination, file: file, format: .original, pages: pages,
                            annotations: .embed, ext: ext, pageCount: 0)
    }

    func open(_ input: FileDescriptor) throws(JobFailure) -> PDFDocument {
        do {
            return try PDFDocument.open(input, description: job.originalName, password: nil)
        } catch {
            if error.kind == .passwordNeeded {
                guard let password = folder.password else {
                    throw JobFailure(.open, "the PDF is protected by a password", remedy: "Drop a copy without a password, or give the folder's password in the configuration (password = ...).")
                }
                do {
                    return try PDFDocument.open(input, description: job.originalName, password: password)
                } catch let second {
                    if second.kind == .passwordNeeded {
                        throw JobFailure(.open, "the PDF is protected by a password, and the folder's password does not open it", remedy: "Drop a copy without a password, or correct the folder's password.")
                    }
                    throw Self.damaged(second)
                }
            }
            throw Self.damaged(error)
        }
    }

    static func damaged(_ error: PDFError) -> JobFailure {
        if error.kind == .outOfMemory { return outOfMemory }
        if case .system(let e) = error.kind {
            return JobFailure(.open, "cannot read the file: \(String(cString: strerror(e)))", remedy: "Drop the file again.", transient: true)
        }
        return JobFailure(.open, "the PDF is damaged beyond repair: \(error.message)", remedy: "Open it in a PDF viewer and save or print it to a new PDF, then drop that.")
    }

    static let outOfMemory = JobFailure(.generate, "the document needs more memory than a worker may use (job-memory)",
                                        remedy: "Simplify the document (print it to a new PDF), or raise [service] job-memory if such documents are expected.")

    static func notAPDF(_ type: ContentType, name: String) -> JobFailure {
        switch type {
        case .empty:
            return JobFailure(.identify, "the file is empty (0 bytes)", remedy: "The copy or scan probably failed; drop the document again.")
        default:
            return JobFailure(.identify, "\"\(name)\" is not a PDF: it seems to be \(type.phrase)", remedy: "Save or export it as PDF and drop the PDF.")
        }
    }

    static func notARegularFile(_ st: stat) -> String? {
        switch st.st_mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a folder"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFSOCK: "a socket"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    static func bytes(_ n: Int64) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(n) bytes" : String(format: "%.1f %@", value, units[unit])
    }

    static func unique(_ warnings: [String]) -> [String] {
        var seen = Set<String>()
        return warnings.filter { seen.insert($0).inserted }
    }

    /// The values of the name template's placeholders for this document.
    public func templateValues(_ facts: DocumentFacts) -> [NameTemplate.Placeholder: String] {
        let (stem, ext) = FileNameSanitizer.split(job.originalName)
        let seconds = Int(now.timeIntervalSince1970)
        return [
            .stem: stem, .ext: ext, .title: facts.title.flatMap { $0.isEmpty ? nil : $0 } ?? stem,
            .folder: folder.name, .date: Clock.format("%Y-%m-%d", seconds: seconds), .time: Clock.format("%H-%M-%S", seconds: seconds),
            .pages: facts.pages > 0 ? String(facts.pages) : "", .n: number.map(String.init) ?? "",
        ]
    }
}

extension AnnotationOption {
    var mode: PDFDocument.AnnotationMode {
        switch self {
        case .embed: .embed
        case .flatten: .flatten
        case .flattenForPrint: .flattenForPrint
        case .remove: .remove
        }
    }
}

extension FileNameSanitizer {
    /// A title for metadata: any Unicode, but no control characters.
    static func cleanTitle(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })).trimmingCharacters(in: .whitespaces)
    }
}
