#!/usr/bin/env bash
# The Java binding's tests (bindings/java), against a real server.
#
#   scripts/test-java.sh [MAVEN ARGS...]        e.g. scripts/test-java.sh -Dtest=ElectorTest
#
# 1. builds the release library when needed (scripts/build-tests.sh, as `make test`: a no-op after it):
#    the jar carries it at linux-x86-64/libmysqlleader.so;
# 2. checks that bindings/java/pom.xml has Cargo.toml's version (the binding refuses a library of
#    another version when it loads);
# 3. mvn -B test: JUnit 5 under Surefire against MYSQLLEADER_TEST_URL (child JVMs for failover,
#    the fence through MariaDB Connector/J, every error kind, misuse);
# 4. mvn -B package, then the jar from a Maven project outside the repository: examples/java,
#    copied to a temporary directory, resolves io.mysqlleader:mysqlleader from a temporary local
#    repository into which the jar was put with `mvn install:install-file` (nothing is written to
#    ~/.m2 for io.mysqlleader), compiles, and runs against the server: it must elect and commit
#    a fenced write through JDBC (exit 0);
# 5. the Spring Boot starter (bindings/java/spring-boot-starter): mvn -B test with the same
#    temporary repositories (the core jar of step 4, never ~/.m2), real application contexts against
#    the server (MYSQLLEADER_TEST_KIND=mysql: MySQL Connector/J for its JDBC part), and a Spring Boot
#    application in three child JVMs (ThreeInstancesTest: a @LeaderOnly fenced job through kill -9
#    of the leader and SIGTERM of the next, 0 overlaps in the rows it committed; about 15 s), on
#    Spring Boot 3.5, then the same classes on Spring Boot 4.0 (mvn -Pboot4 test); afterwards the
#    third-party artifacts it downloaded are copied into ~/.m2 (without io/mysqlleader), so that the
#    next run (and MYSQLLEADER_MAVEN_OFFLINE=1) finds them there.
#
# When MYSQLLEADER_TEST_URL is not set, it runs itself again under scripts/testdb.sh, which starts
# a throwaway mariadbd and stops it. Maven artifacts come from Maven Central as usual, into
# ~/.m2 (MYSQLLEADER_MAVEN_OFFLINE=1 adds -o once they are there). Needs a JDK 17+ and Maven:
# Debian's openjdk-17-jdk-headless and maven are installed with apt-get when missing (as root).
# Exits non-zero when anything fails, including the tests not running at all.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ -z "${MYSQLLEADER_TEST_URL:-}" ]; then
  exec scripts/testdb.sh run "$0" "$@"
fi

say() { echo "test-java: $*" >&2; }

. "$root/scripts/lib.sh"   # apt_install (Debian packages with apt-get when running as root)
# A JDK (javac, not only java) and Maven: installed with apt when missing and running as root.
if ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  apt_install test-java openjdk-17-jdk-headless maven || exit 2
fi
say "$(java -version 2>&1 | head -n 1); $(mvn -v 2>/dev/null | head -n 1 | sed 's/\x1b\[[0-9;]*m//g')"

target=${CARGO_TARGET_DIR:-$root/target}
case "$target" in /*) ;; *) target="$root/$target" ;; esac
mvn_flags=(-B -q -Dmysqlleader.native.dir="$target/release")
[ "${MYSQLLEADER_MAVEN_OFFLINE:-0}" = 1 ] && mvn_flags+=(-o)

# 1. The library the jar carries.
# The same build as `make build` (every target: a no-op after it). A narrower one (--lib) would
# resolve other features, rebuild the library in place, and pull it from under the test parts
# running beside this one (scripts/test-all.sh).
say "scripts/build-tests.sh"
scripts/build-tests.sh

# 2. One version everywhere.
version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
pom_version=$(sed -n '0,/<artifactId>mysqlleader<\/artifactId>/d; s/^  <version>\(.*\)<\/version>/\1/p' bindings/java/pom.xml | head -n 1)
if [ "$pom_version" != "$version" ]; then
  say "bindings/java/pom.xml has version '$pom_version', Cargo.toml '$version': make them equal"
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mysqlleader-java.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# 3. The tests.
cd "$root/bindings/java"
say "mvn test $*"
status=0
mvn "${mvn_flags[@]}" clean test "$@" 2>&1 | tee "$tmp/test.log" || status=$?
if [ "$status" -ne 0 ]; then
  say "failed (mvn exit status $status)"
  exit "$status"
fi
ran=$(cat target/surefire-reports/TEST-*.xml 2>/dev/null | sed -n 's/.*<testsuite [^>]* tests="\([0-9]*\)".*/\1/p' | paste -sd+ | bc || true)
if [ -z "$ran" ] || [ "$ran" -eq 0 ]; then
  say "no test ran"
  exit 1
fi
say "$ran tests passed"

# 4. The jar from a project outside the repository.
say "mvn package; examples/java outside the repository against the jar"
mvn "${mvn_flags[@]}" package -DskipTests
jar=target/mysqlleader-$version.jar
# grep reads the whole listing (not -q): under pipefail, `unzip | grep -q` fails when grep stops
# at the match and unzip dies writing the rest (SIGPIPE).
unzip -l "$jar" | grep ' linux-x86-64/libmysqlleader.so$' >/dev/null || { say "$jar lacks linux-x86-64/libmysqlleader.so"; exit 1; }
repo=$tmp/repo
mvn -B -q install:install-file -Dfile="$jar" -DpomFile=pom.xml -DlocalRepositoryPath="$repo" \
    -DgroupId=io.mysqlleader -DartifactId=mysqlleader -Dversion="$version" -Dpackaging=jar
cp -r "$root/examples/java" "$tmp/example"
# The temporary repository as one more remote repository (a file:// one), the user's ~/.m2 for
# everything else; a separate local repository so that no copy of this jar stays in ~/.m2.
cat >"$tmp/settings.xml" <<EOF
<settings>
  <localRepository>$tmp/m2</localRepository>
  <profiles><profile><id>dist</id><repositories>
    <repository><id>mysqlleader-dist</id><url>file://$repo</url></repository>
  </repositories></profile></profiles>
  <activeProfiles><activeProfile>dist</activeProfile></activeProfiles>
</settings>
EOF
# Seed the temporary local repository with ~/.m2's artifacts (hard links: cheap), without io/mysqlleader.
if [ -d "$HOME/.m2/repository" ]; then
  cp -al "$HOME/.m2/repository" "$tmp/m2"
  rm -rf "$tmp/m2/io/mysqlleader"
fi
(
  cd "$tmp/example"
  mvn -B -q -s "$tmp/settings.xml" package dependency:build-classpath -Dmdep.outputFile=cp.txt
  grep -q "io/mysqlleader/mysqlleader/$version/mysqlleader-$version.jar" cp.txt \
    || { say "the example did not resolve the installed jar: $(cat cp.txt)"; exit 1; }
  url=${MYSQLLEADER_TEST_URL%%\?*}
  userpass=${url#mysql://}; userpass=${userpass%%@*}
  hostdb=${url#*@}
  export MYSQLLEADER_URL=$MYSQLLEADER_TEST_URL
  export MYSQLLEADER_JDBC_URL="jdbc:mariadb://$hostdb?user=${userpass%%:*}&password=${userpass#*:}"
  # MariaDB Connector/J and MySQL's default authentication (caching_sha2_password) without TLS:
  # the driver must fetch the server's RSA key to send the password (first login of an account).
  if [ "${MYSQLLEADER_TEST_KIND:-}" = mysql ]; then
    MYSQLLEADER_JDBC_URL="$MYSQLLEADER_JDBC_URL&allowPublicKeyRetrieval=true"
  fi
  # No library beside the jar: the one inside it is what loads. JNA copies it out to jna.tmpdir;
  # the binding removes that copy once loaded (else every JVM start leaves tens of MB behind).
  mkdir "$tmp/jna"
  env -u MYSQLLEADER_LIB java -Djna.tmpdir="$tmp/jna" -cp "target/classes:$(cat cp.txt)" example.Elect --migrate | tee "$tmp/example.log"
  grep -q "wrote as leader of term" "$tmp/example.log" || { say "examples/java did not write as leader"; exit 1; }
  left=$(find "$tmp/jna" -type f -name 'jna*' ! -name 'jnidispatch*')
  [ -z "$left" ] || { say "the jar's library was copied out and left behind: $left"; exit 1; }
)

# 5. The Spring Boot starter's tests, against the core jar installed in step 4.
say "spring-boot-starter: mvn test"
starter_started=$(date +%s)
cd "$root/bindings/java/spring-boot-starter"
# Spring Boot 3.5 (the pom's), then the same classes in a Spring Boot 4.0 application (-Pboot4:
# the tests compiled against Boot 4, the main classes not rebuilt: no clean in between).
status=0
mvn "${mvn_flags[@]}" -s "$tmp/settings.xml" clean test 2>&1 | tee "$tmp/starter.log" || status=$?
starter_ran() {
  cat target/surefire-reports/TEST-*.xml 2>/dev/null | sed -n 's/.*<testsuite [^>]* tests="\([0-9]*\)".*/\1/p' | paste -sd+ | bc || true
}
ran3=0 ran4=0
if [ "$status" -eq 0 ]; then
  ran3=$(starter_ran)
  mvn "${mvn_flags[@]}" -s "$tmp/settings.xml" -Pboot4 test 2>&1 | tee -a "$tmp/starter.log" || status=$?
  [ "$status" -eq 0 ] && ran4=$(starter_ran)
fi
# Keep what it downloaded (Spring Boot, Micrometer, ...) for the next run; never io.mysqlleader.
rm -rf "$tmp/m2/io/mysqlleader"
if [ -d "$HOME/.m2/repository" ]; then cp -rn "$tmp/m2/." "$HOME/.m2/repository/" 2>/dev/null || true; fi
if [ "$status" -ne 0 ]; then
  say "spring-boot-starter: failed (mvn exit status $status)"
  exit "$status"
fi
if [ -z "$ran3" ] || [ "$ran3" -eq 0 ] || [ -z "$ran4" ] || [ "$ran4" -eq 0 ]; then
  say "spring-boot-starter: no test ran (Boot 3.5: '$ran3', Boot 4.0: '$ran4')"
  exit 1
fi
say "spring-boot-starter: $ran3 tests passed on Spring Boot 3.5, $ran4 on Spring Boot 4.0, in $(( $(date +%s) - starter_started )) s"
say "passed"
