#!/usr/bin/env python3
"""A deterministic LUBM-style data generator, written for rete's benchmarks.

It follows the structure of UBA 1.7 (the Lehigh University Benchmark's data
generator, http://swat.cse.lehigh.edu/projects/lubm/) over the univ-bench
ontology (bench/univ-bench.ttl): universities → 15–25 departments, each with
full/associate/assistant professors, lecturers, undergraduate and graduate
students, courses, graduate courses, research groups and publications, with
UBA's per-department ranges (the constants below) and UBA's IRIs, e.g.
http://www.Department0.University0.edu/FullProfessor0.

It is not a byte-for-byte port of UBA: the random choices differ, so the
answers to the LUBM queries differ from UBA's published LUBM(1,0) answers.
About 148k triples per university on average (123k as UBA states them, plus the
materialised superclass types described below).

Materialised types (on by default, --no-materialize turns them off). rete does
no OWL reasoning, so by default the generator also writes the rdf:type triples
that the ontology entails from the stated types and the stated relations:

  * every superclass along rdfs:subClassOf (FullProfessor → Professor →
    Faculty → Employee → Person; UndergraduateStudent → Student → Person;
    GraduateCourse → Course → Work; Department → Organization; …);
  * the defined classes whose definition the data meets: ub:Chair for the
    head of a department (Person ⊓ ∃headOf.Department), ub:Student for every
    graduate student (Person ⊓ ∃takesCourse.Course), ub:TeachingAssistant for
    teaching assistants (Person ⊓ ∃teachingAssistantOf.Course).

Property inference (worksFor ⊑ memberOf, degreeFrom / hasAlumnus,
subOrganizationOf transitivity) is not materialised; see
bench/lubm-queries/README.md for what that means per query.

Determinism: a self-contained SplitMix64 generator (not Python's `random`),
seeded per university from (seed, university), so the same seed gives
byte-identical output on any Python 3, and university k's triples do not
depend on how many universities are generated. Gzip output has a zero mtime
and no file name in its header (its bytes still depend on the zlib version).

Usage: python3 bench/lubm.py --universities N [--seed 0] -o out.nt[.gz]
"""

from __future__ import annotations

import argparse
import gzip
import io
import sys

UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"

# UBA 1.7's per-department ranges (inclusive).
DEPT = (15, 25)  # departments per university
FULL_PROF = (7, 10)
ASSOC_PROF = (10, 14)
ASST_PROF = (8, 11)
LECTURER = (5, 7)
UG_PER_FACULTY = (8, 14)  # undergraduate students per faculty member
GRAD_PER_FACULTY = (3, 4)  # graduate students per faculty member
FACULTY_COURSES = (1, 2)  # undergraduate courses taught by each faculty member
FACULTY_GRAD_COURSES = (1, 2)  # graduate courses taught by each faculty member
UG_COURSES = (2, 4)  # courses taken by an undergraduate student
GRAD_COURSES = (1, 3)  # graduate courses taken by a graduate student
RESEARCH_GROUPS = (10, 20)
UG_ADVISOR_RATIO = 5  # one undergraduate in 5 has an advisor
GRAD_TA_RATIO = (4, 5)  # one graduate student in 4–5 is a teaching assistant
GRAD_RA_RATIO = (3, 4)  # one graduate student in 3–4 is a research assistant
PUBLICATIONS = {  # publications per faculty member, by class
    "FullProfessor": (15, 20),
    "AssociateProfessor": (10, 18),
    "AssistantProfessor": (5, 10),
    "Lecturer": (0, 5),
}
GRAD_PUBLICATIONS = (0, 5)  # faculty publications a graduate student co-authors
RESEARCH_INTERESTS = 30  # "Research0" … "Research29"
DEGREE_UNIVERSITIES = 1000  # degrees come from University0 … University999, generated or not

# Told superclasses (transitive closure of rdfs:subClassOf in univ-bench.ttl) of the classes
# the generator states.
SUPERCLASSES = {
    "University": ["Organization"],
    "Department": ["Organization"],
    "ResearchGroup": ["Organization"],
    "Course": ["Work"],
    "GraduateCourse": ["Course", "Work"],
    "Publication": [],
    "FullProfessor": ["Professor", "Faculty", "Employee", "Person"],
    "AssociateProfessor": ["Professor", "Faculty", "Employee", "Person"],
    "AssistantProfessor": ["Professor", "Faculty", "Employee", "Person"],
    "Lecturer": ["Faculty", "Employee", "Person"],
    "Chair": ["Professor", "Faculty", "Employee", "Person"],
    "UndergraduateStudent": ["Student", "Person"],
    "GraduateStudent": ["Person"],
    "Student": ["Person"],
    "TeachingAssistant": ["Person"],
    "ResearchAssistant": ["Person"],
    "Professor": ["Faculty", "Employee", "Person"],
    "Faculty": ["Employee", "Person"],
    "Employee": ["Person"],
    "Person": [],
    "Organization": [],
    "Work": [],
}

MASK = (1 << 64) - 1


class Rng:
    """SplitMix64: tiny, fast enough, and identical on every Python version."""

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK

    def next64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform in [0, n) (modulo bias below 2^-50 for the n used here)."""
        return self.next64() % n

    def between(self, bounds: tuple[int, int]) -> int:
        low, high = bounds
        return low + self.below(high - low + 1)

    def sample(self, n: int, k: int) -> list[int]:
        """k distinct values of range(n), in drawing order (partial Fisher–Yates)."""
        k = min(k, n)
        chosen: dict[int, int] = {}
        out = []
        for i in range(k):
            j = i + self.below(n - i)
            out.append(chosen.get(j, j))
            chosen[j] = chosen.get(i, i)
        return out


def university_seed(seed: int, university: int) -> int:
    mixer = Rng(seed * 0x100000001B3 + university)
    mixer.next64()
    return mixer.next64()


class Writer:
    """Collects N-Triples lines for one department and counts them."""

    def __init__(self, out: io.TextIOBase, materialize: bool) -> None:
        self.out = out
        self.materialize = materialize
        self.lines: list[str] = []
        self.count = 0

    def iri(self, s: str, p: str, o: str) -> None:
        self.lines.append(f"<{s}> <{UB}{p}> <{o}> .\n")

    def literal(self, s: str, p: str, value: str) -> None:
        self.lines.append(f'<{s}> <{UB}{p}> "{value}" .\n')

    def typed(self, s: str, *stated: str, implied: tuple[str, ...] = ()) -> None:
        """States the `stated` classes; with materialisation also their superclasses and the
        `implied` defined classes with theirs, each type once."""
        seen = set(stated)
        for cls in stated:
            self.lines.append(f"<{s}> {RDF_TYPE} <{UB}{cls}> .\n")
        if self.materialize:
            for extra in (*(sup for cls in stated for sup in SUPERCLASSES[cls]), *implied):
                for name in (extra, *SUPERCLASSES[extra]):
                    if name not in seen:
                        seen.add(name)
                        self.lines.append(f"<{s}> {RDF_TYPE} <{UB}{name}> .\n")

    def flush(self) -> None:
        self.count += len(self.lines)
        self.out.write("".join(self.lines))
        self.lines.clear()


def university_iri(u: int) -> str:
    return f"http://www.University{u}.edu"


def person(w: Writer, iri: str, local: str, domain: str) -> None:
    w.literal(iri, "name", local)
    w.literal(iri, "emailAddress", f"{local}@{domain}")
    w.literal(iri, "telephone", "xxx-xxx-xxxx")


def generate_department(w: Writer, rng: Rng, u: int, d: int) -> None:
    univ = university_iri(u)
    domain = f"Department{d}.University{u}.edu"
    dept = f"http://www.{domain}"
    w.typed(dept, "Department")
    w.literal(dept, "name", f"Department{d}")
    w.iri(dept, "subOrganizationOf", univ)

    # Faculty, in UBA's order; the first full professor heads the department.
    faculty: list[tuple[str, str]] = []  # (class, iri)
    for cls, bounds in (("FullProfessor", FULL_PROF), ("AssociateProfessor", ASSOC_PROF), ("AssistantProfessor", ASST_PROF), ("Lecturer", LECTURER)):
        for i in range(rng.between(bounds)):
            faculty.append((cls, f"{dept}/{cls}{i}"))
    professors = [iri for cls, iri in faculty if cls != "Lecturer"]
    head = faculty[rng.below(sum(1 for cls, _ in faculty if cls == "FullProfessor"))][1]

    # Courses: each faculty member teaches 1–2 courses and 1–2 graduate courses, numbered in order.
    teaches: dict[str, list[str]] = {}
    course_count = grad_course_count = 0
    for _, iri in faculty:
        mine = []
        for _ in range(rng.between(FACULTY_COURSES)):
            mine.append(f"{dept}/Course{course_count}")
            course_count += 1
        for _ in range(rng.between(FACULTY_GRAD_COURSES)):
            mine.append(f"{dept}/GraduateCourse{grad_course_count}")
            grad_course_count += 1
        teaches[iri] = mine

    publications: list[tuple[str, list[str]]] = []  # (iri, authors)
    for cls, iri in faculty:
        local = iri.rsplit("/", 1)[1]
        w.typed(iri, cls, implied=("Chair",) if iri == head else ())
        person(w, iri, local, domain)
        w.iri(iri, "worksFor", dept)
        if iri == head:
            w.iri(iri, "headOf", dept)
        w.literal(iri, "researchInterest", f"Research{rng.below(RESEARCH_INTERESTS)}")
        for prop in ("undergraduateDegreeFrom", "mastersDegreeFrom", "doctoralDegreeFrom"):
            w.iri(iri, prop, university_iri(rng.below(DEGREE_UNIVERSITIES)))
        for course in teaches[iri]:
            w.iri(iri, "teacherOf", course)
        for p in range(rng.between(PUBLICATIONS[cls])):
            publications.append((f"{iri}/Publication{p}", [iri]))
    w.flush()

    for i in range(course_count):
        iri = f"{dept}/Course{i}"
        w.typed(iri, "Course")
        w.literal(iri, "name", f"Course{i}")
    for i in range(grad_course_count):
        iri = f"{dept}/GraduateCourse{i}"
        w.typed(iri, "GraduateCourse")
        w.literal(iri, "name", f"GraduateCourse{i}")
    w.flush()

    n_faculty = len(faculty)
    for i in range(n_faculty * rng.between(UG_PER_FACULTY)):
        local = f"UndergraduateStudent{i}"
        iri = f"{dept}/{local}"
        w.typed(iri, "UndergraduateStudent")
        person(w, iri, local, domain)
        w.iri(iri, "memberOf", dept)
        for c in sorted(rng.sample(course_count, rng.between(UG_COURSES))):
            w.iri(iri, "takesCourse", f"{dept}/Course{c}")
        if rng.below(UG_ADVISOR_RATIO) == 0:
            w.iri(iri, "advisor", professors[rng.below(len(professors))])
        if i % 1000 == 999:
            w.flush()
    w.flush()

    # Graduate students: every one has an advisor; one in 4–5 assists teaching a course, one in 3–4 is a research assistant.
    n_grad = n_faculty * rng.between(GRAD_PER_FACULTY)
    ta_ratio = rng.between(GRAD_TA_RATIO)
    ra_ratio = rng.between(GRAD_RA_RATIO)
    ta_courses = iter(rng.sample(course_count, course_count))
    for i in range(n_grad):
        local = f"GraduateStudent{i}"
        iri = f"{dept}/{local}"
        ta_course = next(ta_courses, None) if rng.below(ta_ratio) == 0 else None
        research_assistant = rng.below(ra_ratio) == 0
        implied = ("Student",) + (("TeachingAssistant",) if ta_course is not None else ())
        w.typed(iri, "GraduateStudent", *(("ResearchAssistant",) if research_assistant else ()), implied=implied)
        person(w, iri, local, domain)
        w.iri(iri, "memberOf", dept)
        w.iri(iri, "undergraduateDegreeFrom", university_iri(rng.below(DEGREE_UNIVERSITIES)))
        for c in sorted(rng.sample(grad_course_count, rng.between(GRAD_COURSES))):
            w.iri(iri, "takesCourse", f"{dept}/GraduateCourse{c}")
        w.iri(iri, "advisor", professors[rng.below(len(professors))])
        if ta_course is not None:
            w.iri(iri, "teachingAssistantOf", f"{dept}/Course{ta_course}")
        for p in sorted(rng.sample(len(publications), rng.between(GRAD_PUBLICATIONS))):
            publications[p][1].append(iri)
    w.flush()

    for i in range(rng.between(RESEARCH_GROUPS)):
        iri = f"{dept}/ResearchGroup{i}"
        w.typed(iri, "ResearchGroup")
        w.iri(iri, "subOrganizationOf", dept)
    for iri, authors in publications:
        w.typed(iri, "Publication")
        w.literal(iri, "name", iri.rsplit("/", 1)[1])
        for author in authors:
            w.iri(iri, "publicationAuthor", author)
    w.flush()


def generate(out: io.TextIOBase, universities: int, seed: int, materialize: bool) -> int:
    w = Writer(out, materialize)
    for u in range(universities):
        rng = Rng(university_seed(seed, u))
        univ = university_iri(u)
        w.typed(univ, "University")
        w.literal(univ, "name", f"University{u}")
        w.flush()
        for d in range(rng.between(DEPT)):
            generate_department(w, rng, u, d)
    return w.count


def main() -> int:
    parser = argparse.ArgumentParser(description="Generate LUBM-style N-Triples (univ-bench ontology, UBA's structure).")
    parser.add_argument("--universities", "-u", type=int, default=1, help="number of universities (about 148k triples each)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed, same bytes)")
    parser.add_argument("--no-materialize", dest="materialize", action="store_false", help="state only the most specific types, as UBA does")
    parser.add_argument("-o", "--output", required=True, help="output file; gzip if it ends in .gz; - for stdout")
    args = parser.parse_args()
    if args.universities < 1:
        parser.error("--universities must be at least 1")

    if args.output == "-":
        count = generate(sys.stdout, args.universities, args.seed, args.materialize)
    elif args.output.endswith(".gz"):
        with open(args.output, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) as gz:
                with io.TextIOWrapper(gz, encoding="utf-8", newline="\n", write_through=False) as text:
                    count = generate(text, args.universities, args.seed, args.materialize)
    else:
        with open(args.output, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as text:
            count = generate(text, args.universities, args.seed, args.materialize)
    print(f"lubm.py: {count} triples, {args.universities} universities, seed {args.seed}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
