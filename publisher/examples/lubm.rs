//! bench/lubm.py in Rust: the same LUBM-style N-Triples, byte for byte, for
//! the same seed, fast enough to feed `rete build` through a pipe at 100 M –
//! 1 B triples without being what is measured (issue 17; bench/lubm.py's
//! docstring says what the data is and how it follows UBA 1.7).
//!
//! ```sh
//! cargo run --release -p rete-publisher --example lubm -- -u 100 --seed 0 -o - | rete build - --format nt -o lubm.rete
//! ```
//!
//! Each university's triples come from its own SplitMix64 stream seeded from
//! (seed, university), as in lubm.py; the two programs' outputs are compared
//! byte for byte in docs/BENCHMARK.md "Scale (issue 17)".

use std::io::{BufWriter, Write};
use std::process::ExitCode;

const UB: &str = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
const RDF_TYPE: &str = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>";

// UBA 1.7's per-department ranges (inclusive), as in lubm.py.
const DEPT: (u64, u64) = (15, 25);
const FULL_PROF: (u64, u64) = (7, 10);
const ASSOC_PROF: (u64, u64) = (10, 14);
const ASST_PROF: (u64, u64) = (8, 11);
const LECTURER: (u64, u64) = (5, 7);
const UG_PER_FACULTY: (u64, u64) = (8, 14);
const GRAD_PER_FACULTY: (u64, u64) = (3, 4);
const FACULTY_COURSES: (u64, u64) = (1, 2);
const FACULTY_GRAD_COURSES: (u64, u64) = (1, 2);
const UG_COURSES: (u64, u64) = (2, 4);
const GRAD_COURSES: (u64, u64) = (1, 3);
const RESEARCH_GROUPS: (u64, u64) = (10, 20);
const UG_ADVISOR_RATIO: u64 = 5;
const GRAD_TA_RATIO: (u64, u64) = (4, 5);
const GRAD_RA_RATIO: (u64, u64) = (3, 4);
const GRAD_PUBLICATIONS: (u64, u64) = (0, 5);
const RESEARCH_INTERESTS: u64 = 30;
const DEGREE_UNIVERSITIES: u64 = 1000;

fn publications(class: &str) -> (u64, u64) {
    match class {
        "FullProfessor" => (15, 20),
        "AssociateProfessor" => (10, 18),
        "AssistantProfessor" => (5, 10),
        _ => (0, 5),
    }
}

/// Told superclasses (transitive closure of rdfs:subClassOf in bench/univ-bench.ttl).
fn superclasses(class: &str) -> &'static [&'static str] {
    match class {
        "University" | "Department" | "ResearchGroup" => &["Organization"],
        "Course" => &["Work"],
        "GraduateCourse" => &["Course", "Work"],
        "FullProfessor" | "AssociateProfessor" | "AssistantProfessor" | "Chair" => &["Professor", "Faculty", "Employee", "Person"],
        "Lecturer" | "Professor" => &["Faculty", "Employee", "Person"],
        "UndergraduateStudent" => &["Student", "Person"],
        "GraduateStudent" | "Student" | "TeachingAssistant" | "ResearchAssistant" | "Employee" => &["Person"],
        "Faculty" => &["Employee", "Person"],
        _ => &[],
    }
}

/// SplitMix64, as lubm.py's `Rng`.
struct Rng(u64);

impl Rng {
    fn next64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next64() % n
    }

    fn between(&mut self, (low, high): (u64, u64)) -> u64 {
        low + self.below(high - low + 1)
    }

    /// k distinct values of 0..n in drawing order (partial Fisher–Yates).
    fn sample(&mut self, n: u64, k: u64) -> Vec<u64> {
        let k = k.min(n);
        let mut chosen = std::collections::HashMap::new();
        let mut out = Vec::with_capacity(k as usize);
        for i in 0..k {
            let j = i + self.below(n - i);
            out.push(*chosen.get(&j).unwrap_or(&j));
            let at_i = *chosen.get(&i).unwrap_or(&i);
            chosen.insert(j, at_i);
        }
        out
    }

    fn sorted_sample(&mut self, n: u64, k: u64) -> Vec<u64> {
        let mut sample = self.sample(n, k);
        sample.sort_unstable();
        sample
    }
}

fn university_seed(seed: u64, university: u64) -> u64 {
    let mut mixer = Rng(seed.wrapping_mul(0x100_0000_01B3).wrapping_add(university));
    mixer.next64();
    mixer.next64()
}

/// Writes N-Triples lines and counts them.
struct Writer<W: Write> {
    out: W,
    materialize: bool,
    count: u64,
}

impl<W: Write> Writer<W> {
    fn iri(&mut self, s: &str, p: &str, o: &str) -> std::io::Result<()> {
        self.count += 1;
        writeln!(self.out, "<{s}> <{UB}{p}> <{o}> .")
    }

    fn literal(&mut self, s: &str, p: &str, value: &str) -> std::io::Result<()> {
        self.count += 1;
        writeln!(self.out, "<{s}> <{UB}{p}> \"{value}\" .")
    }

    /// The `stated` classes; with materialisation their superclasses and the
    /// `implied` defined classes with theirs, each type once.
    fn typed(&mut self, s: &str, stated: &[&str], implied: &[&str]) -> std::io::Result<()> {
        let mut seen: Vec<&str> = stated.to_vec();
        for class in stated {
            self.count += 1;
            writeln!(self.out, "<{s}> {RDF_TYPE} <{UB}{class}> .")?;
        }
        if self.materialize {
            let extras = stated.iter().flat_map(|class| superclasses(class).iter().copied()).chain(implied.iter().copied());
            for extra in extras.collect::<Vec<_>>() {
                for name in std::iter::once(extra).chain(superclasses(extra).iter().copied()) {
                    if !seen.contains(&name) {
                        seen.push(name);
                        self.count += 1;
                        writeln!(self.out, "<{s}> {RDF_TYPE} <{UB}{name}> .")?;
                    }
                }
            }
        }
        Ok(())
    }

    fn person(&mut self, iri: &str, local: &str, domain: &str) -> std::io::Result<()> {
        self.literal(iri, "name", local)?;
        self.literal(iri, "emailAddress", &format!("{local}@{domain}"))?;
        self.literal(iri, "telephone", "xxx-xxx-xxxx")
    }
}

fn university_iri(u: u64) -> String {
    format!("http://www.University{u}.edu")
}

fn department<W: Write>(w: &mut Writer<W>, rng: &mut Rng, u: u64, d: u64) -> std::io::Result<()> {
    let univ = university_iri(u);
    let domain = format!("Department{d}.University{u}.edu");
    let dept = format!("http://www.{domain}");
    w.typed(&dept, &["Department"], &[])?;
    w.literal(&dept, "name", &format!("Department{d}"))?;
    w.iri(&dept, "subOrganizationOf", &univ)?;

    // Faculty, in UBA's order; the first full professor heads the department.
    let mut faculty: Vec<(&str, String)> = Vec::new();
    for (class, bounds) in [("FullProfessor", FULL_PROF), ("AssociateProfessor", ASSOC_PROF), ("AssistantProfessor", ASST_PROF), ("Lecturer", LECTURER)] {
        for i in 0..rng.between(bounds) {
            faculty.push((class, format!("{dept}/{class}{i}")));
        }
    }
    let professors: Vec<&str> = faculty.iter().filter(|(class, _)| *class != "Lecturer").map(|(_, iri)| iri.as_str()).collect();
    let full = faculty.iter().filter(|(class, _)| *class == "FullProfessor").count() as u64;
    let head = faculty[rng.below(full) as usize].1.clone();

    // Courses: each faculty member teaches 1–2 courses and 1–2 graduate courses, numbered in order.
    let mut teaches: Vec<Vec<String>> = Vec::new();
    let (mut course_count, mut grad_course_count) = (0u64, 0u64);
    for _ in &faculty {
        let mut mine = Vec::new();
        for _ in 0..rng.between(FACULTY_COURSES) {
            mine.push(format!("{dept}/Course{course_count}"));
            course_count += 1;
        }
        for _ in 0..rng.between(FACULTY_GRAD_COURSES) {
            mine.push(format!("{dept}/GraduateCourse{grad_course_count}"));
            grad_course_count += 1;
        }
        teaches.push(mine);
    }

    let mut publication_list: Vec<(String, Vec<String>)> = Vec::new();
    for ((class, iri), courses) in faculty.iter().zip(&teaches) {
        let local = iri.rsplit('/').next().unwrap_or(iri);
        let is_head = *iri == head;
        w.typed(iri, &[class], if is_head { &["Chair"] } else { &[] })?;
        w.person(iri, local, &domain)?;
        w.iri(iri, "worksFor", &dept)?;
        if is_head {
            w.iri(iri, "headOf", &dept)?;
        }
        w.literal(iri, "researchInterest", &format!("Research{}", rng.below(RESEARCH_INTERESTS)))?;
        for property in ["undergraduateDegreeFrom", "mastersDegreeFrom", "doctoralDegreeFrom"] {
            w.iri(iri, property, &university_iri(rng.below(DEGREE_UNIVERSITIES)))?;
        }
        for course in courses {
            w.iri(iri, "teacherOf", course)?;
        }
        for p in 0..rng.between(publications(class)) {
            publication_list.push((format!("{iri}/Publication{p}"), vec![iri.clone()]));
        }
    }

    for i in 0..course_count {
        let iri = format!("{dept}/Course{i}");
        w.typed(&iri, &["Course"], &[])?;
        w.literal(&iri, "name", &format!("Course{i}"))?;
    }
    for i in 0..grad_course_count {
        let iri = format!("{dept}/GraduateCourse{i}");
        w.typed(&iri, &["GraduateCourse"], &[])?;
        w.literal(&iri, "name", &format!("GraduateCourse{i}"))?;
    }

    let n_faculty = faculty.len() as u64;
    for i in 0..n_faculty * rng.between(UG_PER_FACULTY) {
        let local = format!("UndergraduateStudent{i}");
        let iri = format!("{dept}/{local}");
        w.typed(&iri, &["UndergraduateStudent"], &[])?;
        w.person(&iri, &local, &domain)?;
        w.iri(&iri, "memberOf", &dept)?;
        let k = rng.between(UG_COURSES);
        for c in rng.sorted_sample(course_count, k) {
            w.iri(&iri, "takesCourse", &format!("{dept}/Course{c}"))?;
        }
        if rng.below(UG_ADVISOR_RATIO) == 0 {
            let advisor = professors[rng.below(professors.len() as u64) as usize];
            w.iri(&iri, "advisor", advisor)?;
        }
    }

    // Graduate students: every one has an advisor; one in 4–5 assists teaching a course, one in 3–4 is a research assistant.
    let n_grad = n_faculty * rng.between(GRAD_PER_FACULTY);
    let ta_ratio = rng.between(GRAD_TA_RATIO);
    let ra_ratio = rng.between(GRAD_RA_RATIO);
    let mut ta_courses = rng.sample(course_count, course_count).into_iter();
    for i in 0..n_grad {
        let local = format!("GraduateStudent{i}");
        let iri = format!("{dept}/{local}");
        let ta_course = if rng.below(ta_ratio) == 0 { ta_courses.next() } else { None };
        let research_assistant = rng.below(ra_ratio) == 0;
        let implied: &[&str] = if ta_course.is_some() { &["Student", "TeachingAssistant"] } else { &["Student"] };
        let stated: &[&str] = if research_assistant { &["GraduateStudent", "ResearchAssistant"] } else { &["GraduateStudent"] };
        w.typed(&iri, stated, implied)?;
        w.person(&iri, &local, &domain)?;
        w.iri(&iri, "memberOf", &dept)?;
        w.iri(&iri, "undergraduateDegreeFrom", &university_iri(rng.below(DEGREE_UNIVERSITIES)))?;
        let k = rng.between(GRAD_COURSES);
        for c in rng.sorted_sample(grad_course_count, k) {
            w.iri(&iri, "takesCourse", &format!("{dept}/GraduateCourse{c}"))?;
        }
        let advisor = professors[rng.below(professors.len() as u64) as usize];
        w.iri(&iri, "advisor", advisor)?;
        if let Some(course) = ta_course {
            w.iri(&iri, "teachingAssistantOf", &format!("{dept}/Course{course}"))?;
        }
        let k = rng.between(GRAD_PUBLICATIONS);
        for p in rng.sorted_sample(publication_list.len() as u64, k) {
            publication_list[p as usize].1.push(iri.clone());
        }
    }

    for i in 0..rng.between(RESEARCH_GROUPS) {
        let iri = format!("{dept}/ResearchGroup{i}");
        w.typed(&iri, &["ResearchGroup"], &[])?;
        w.iri(&iri, "subOrganizationOf", &dept)?;
    }
    for (iri, authors) in &publication_list {
        w.typed(iri, &["Publication"], &[])?;
        w.literal(iri, "name", iri.rsplit('/').next().unwrap_or(iri))?;
        for author in authors {
            w.iri(iri, "publicationAuthor", author)?;
        }
    }
    Ok(())
}

fn generate<W: Write>(w: &mut Writer<W>, universities: u64, seed: u64) -> std::io::Result<()> {
    for u in 0..universities {
        let mut rng = Rng(university_seed(seed, u));
        let univ = university_iri(u);
        w.typed(&univ, &["University"], &[])?;
        w.literal(&univ, "name", &format!("University{u}"))?;
        for d in 0..rng.between(DEPT) {
            department(w, &mut rng, u, d)?;
        }
    }
    w.out.flush()
}

struct Args {
    universities: u64,
    seed: u64,
    materialize: bool,
    output: String,
}

const USAGE: &str = "usage: lubm --universities N [--seed S] [--no-materialize] -o OUTPUT.nt|-";

fn parse_args() -> Result<Args, String> {
    let mut args = Args { universities: 1, seed: 0, materialize: true, output: String::new() };
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        let mut value = |name: &str| given.next().ok_or_else(|| format!("{name} needs a value"));
        let number = |name: &str, text: String| text.parse::<u64>().map_err(|_| format!("{name} expects a whole number, not {text:?}"));
        match flag.as_str() {
            "-u" | "--universities" => args.universities = number("--universities", value("--universities")?)?,
            "--seed" => args.seed = number("--seed", value("--seed")?)?,
            "--no-materialize" => args.materialize = false,
            "-o" | "--output" => args.output = value("--output")?,
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    if args.universities < 1 {
        return Err("--universities must be at least 1".into());
    }
    if args.output.is_empty() {
        return Err(format!("-o is required (- for stdout)\n{USAGE}"));
    }
    if args.output.ends_with(".gz") {
        return Err("gzip output: use bench/lubm.py, or pipe this program's output through gzip".into());
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("lubm: {message}");
            return ExitCode::from(2);
        }
    };
    let out: Box<dyn Write> = if args.output == "-" {
        Box::new(std::io::stdout().lock())
    } else {
        match std::fs::File::create(&args.output) {
            Ok(file) => Box::new(file),
            Err(error) => {
                eprintln!("lubm: cannot create {}: {error}", args.output);
                return ExitCode::from(2);
            }
        }
    };
    let mut writer = Writer { out: BufWriter::with_capacity(1 << 20, out), materialize: args.materialize, count: 0 };
    match generate(&mut writer, args.universities, args.seed) {
        Ok(()) => {
            eprintln!("lubm: {} triples, {} universities, seed {}", writer.count, args.universities, args.seed);
            ExitCode::SUCCESS
        }
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("lubm: cannot write {}: {error}", args.output);
            ExitCode::from(1)
        }
    }
}
