//! Throwaway MariaDB servers for the replication experiment (docs/replication.md): each in a
//! directory of its own, on a free loopback port, with a binary log and GTIDs, so that two of them
//! make a primary and its replica. Every server and every child process is stopped when its
//! value is dropped, whatever happens to the run.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mysql_async::consts::ColumnType;
use mysql_async::prelude::Queryable;
use mysql_async::{Column, Conn, OptsBuilder, Params, Row, Value};

pub type Res<T> = Result<T, String>;

/// The MariaDB programs, found in PATH or the usual sbin directories.
#[derive(Clone, Debug)]
pub struct Programs {
    pub mariadbd: PathBuf,
    pub client: PathBuf,
    pub install_db: PathBuf,
}

impl Programs {
    pub fn find() -> Res<Programs> {
        let find = |names: &[&str]| -> Option<PathBuf> {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let dirs = std::env::split_paths(&path).chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from));
            dirs.flat_map(|d| names.iter().map(move |n| d.join(n))).find(|p| p.is_file())
        };
        let missing = "mariadbd is not installed (Debian: apt-get install mariadb-server mariadb-client; \
                       scripts/replication-experiment.sh does that when run as root)";
        Ok(Programs {
            mariadbd: find(&["mariadbd", "mysqld"]).ok_or(missing)?,
            client: find(&["mariadb", "mysql"]).ok_or(missing)?,
            install_db: find(&["mariadb-install-db", "mysql_install_db"]).ok_or(missing)?,
        })
    }

    /// `mariadbd --version`'s version word, for the report.
    pub fn version(&self) -> String {
        let out = Command::new(&self.mariadbd).arg("--version").output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        out.ok().and_then(|s| s.split_whitespace().nth(2).map(str::to_string)).unwrap_or_default()
    }
}

/// A free TCP port on 127.0.0.1 (free when asked; the server binds it a moment later).
pub fn free_port() -> Res<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

fn user_name() -> String {
    Command::new("id").arg("-un").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_else(|_| "root".into())
}

/// One throwaway server: `server_id`, a binary log (ROW, GTIDs), replication not started.
pub struct Server {
    pub dir: PathBuf,
    pub port: u16,
    pub server_id: u32,
    programs: Programs,
    process: Option<Child>,
}

impl Server {
    /// A fresh data directory in `dir` (not started).
    pub fn init(programs: &Programs, dir: &Path, server_id: u32) -> Res<Server> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let out = Command::new(&programs.install_db)
            .args(["--no-defaults", &format!("--datadir={}", dir.join("data").display()), &format!("--user={}", user_name()),
                   "--auth-root-authentication-method=normal", "--skip-test-db"])
            .output()
            .map_err(|e| format!("cannot run {}: {e}", programs.install_db.display()))?;
        if !out.status.success() {
            return Err(format!("mariadb-install-db failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(Server { dir: dir.to_path_buf(), port: free_port()?, server_id, programs: programs.clone(), process: None })
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.join("mysqld.sock")
    }

    pub fn is_up(&self) -> bool {
        self.process.is_some()
    }

    /// Starts the server (`read_only` ON or OFF) and waits until it answers (at most 60 s).
    pub fn launch(&mut self, read_only: bool) -> Res<()> {
        let d = |name: &str, value: &dyn std::fmt::Display| format!("--{name}={value}");
        // A temporary directory of its own: a server starting removes every "#sql*" file of its
        // temporary directory, another server's temporary tables in use too.
        let tmp = self.dir.join("tmp");
        std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        let child = Command::new(&self.programs.mariadbd)
            .args([
                "--no-defaults".to_string(),
                d("user", &user_name()),
                d("datadir", &self.dir.join("data").display()),
                d("tmpdir", &tmp.display()),
                d("socket", &self.socket().display()),
                d("port", &self.port),
                "--bind-address=127.0.0.1".into(),
                d("pid-file", &self.dir.join("mysqld.pid").display()),
                d("log-error", &self.dir.join("error.log").display()),
                "--skip-name-resolve".into(),
                d("server-id", &self.server_id),
                d("log-bin", &self.dir.join("data/binlog").display()),
                "--binlog-format=ROW".into(),
                "--log-slave-updates=ON".into(),
                d("read-only", &if read_only { "ON" } else { "OFF" }),
                "--skip-slave-start".into(),
                "--max-connections=200".into(),
                "--innodb-buffer-pool-size=64M".into(),
                "--innodb-log-file-size=48M".into(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .die_with_parent()
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.programs.mariadbd.display()))?;
        self.process = Some(child);
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let ok = Command::new(&self.programs.client)
                .args(["--no-defaults", &format!("--socket={}", self.socket().display()), "-uroot", "-e", "SELECT 1"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return Ok(());
            }
            if let Some(Ok(Some(status))) = self.process.as_mut().map(Child::try_wait) {
                self.process = None;
                let log = std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(20).collect();
                return Err(format!("mariadbd exited during start-up ({status}):\n{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n")));
            }
            if Instant::now() > until {
                return Err("mariadbd did not answer within 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// SIGKILL, as a crashed host; the data directory stays for a relaunch.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.process.take() {
            // SAFETY: kill(2) on our own child's pid; SIGCONT first in case it was stopped.
            unsafe { libc::kill(child.id() as i32, libc::SIGCONT) };
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// A new root connection over the server's Unix socket.
    pub async fn root(&self) -> Res<Conn> {
        let opts = OptsBuilder::default().socket(Some(self.socket().to_string_lossy().into_owned())).user(Some("root"));
        Conn::new(opts).await.map_err(|e| format!("server-id {}: cannot connect as root: {e}", self.server_id))
    }

    /// Runs `statements` as root, one after the other.
    pub async fn run(&self, statements: &[&str]) -> Res<()> {
        let mut conn = self.root().await?;
        for s in statements {
            conn.query_drop(*s).await.map_err(|e| format!("server-id {}: {s}: {e}", self.server_id))?;
        }
        let _ = conn.disconnect().await;
        Ok(())
    }

    /// The first column of the first row of `sql` (with `params` bound to its `?`), as text;
    /// `None` when there is no row.
    pub async fn first_text(&self, sql: &str, params: impl Into<Params> + Send) -> Res<Option<String>> {
        let mut conn = self.root().await?;
        let rows: Vec<Row> = conn.exec(sql, params).await.map_err(|e| format!("server-id {}: {sql}: {e}", self.server_id))?;
        let _ = conn.disconnect().await;
        Ok(rows.first().and_then(|r| r.as_ref(0).zip(r.columns_ref().first())).map(|(v, c)| text(v, c)))
    }

    /// `sql` (with `params` bound to its `?`) as the command-line client prints it with `-B`:
    /// a line of column names, then one line per row, tab-separated; nothing when there is no row.
    pub async fn table(&self, sql: &str, params: impl Into<Params> + Send) -> Res<Vec<String>> {
        let mut conn = self.root().await?;
        let rows: Vec<Row> = conn.exec(sql, params).await.map_err(|e| format!("server-id {}: {sql}: {e}", self.server_id))?;
        let _ = conn.disconnect().await;
        Ok(table_lines(&rows))
    }

    /// Feeds `script` to the command-line client as `user` (password `password`) into `db`, as
    /// a DBA installs the schema.
    pub fn client_script(&self, user: &str, password: &str, db: &str, script: &str) -> Res<()> {
        let mut child = Command::new(&self.programs.client)
            .args(["--no-defaults", &format!("--socket={}", self.socket().display()), &format!("-u{user}"), db])
            .env("MYSQL_PWD", password)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run the client: {e}"))?;
        child.stdin.take().ok_or("no stdin")?.write_all(script.as_bytes()).map_err(|e| e.to_string())?;
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("installing into {db} as {user} failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `rows` as `mariadb -B` prints them: column names, then the rows, tab-separated.
pub fn table_lines(rows: &[Row]) -> Vec<String> {
    let Some(first) = rows.first() else { return Vec::new() };
    let columns = first.columns_ref();
    let mut out = vec![columns.iter().map(|c| c.name_str().into_owned()).collect::<Vec<_>>().join("\t")];
    for row in rows {
        let cells: Vec<String> = (0..columns.len()).map(|i| row.as_ref(i).map_or_else(|| "NULL".into(), |v| text(v, &columns[i]))).collect();
        out.push(cells.join("\t"));
    }
    out
}

/// One value as the command-line client prints it (the binary protocol's dates and times with
/// the column's fractional digits).
pub fn text(v: &Value, col: &Column) -> String {
    let frac = |us: u32| match col.decimals() {
        d @ 1..=6 => format!(".{:06}", us)[..=d as usize].to_string(),
        _ => String::new(),
    };
    match v {
        Value::NULL => "NULL".into(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Double(f) => f.to_string(),
        Value::Date(y, mo, d, h, mi, s, us) => match col.column_type() {
            ColumnType::MYSQL_TYPE_DATE | ColumnType::MYSQL_TYPE_NEWDATE => format!("{y:04}-{mo:02}-{d:02}"),
            _ => format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}{}", frac(*us)),
        },
        Value::Time(neg, days, h, mi, s, us) => {
            format!("{}{:02}:{mi:02}:{s:02}{}", if *neg { "-" } else { "" }, *days * 24 + u32::from(*h), frac(*us))
        }
    }
}

/// A child that gets SIGKILL when this process dies, however it dies (a backstop for the Drop
/// guards, which a SIGKILL of this process skips).
trait DieWithParent {
    fn die_with_parent(&mut self) -> &mut Self;
}

impl DieWithParent for Command {
    fn die_with_parent(&mut self) -> &mut Self {
        // SAFETY: prctl(2) is async-signal-safe; the closure touches no memory of the parent.
        unsafe {
            self.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            })
        }
    }
}

/// Child processes that are stopped (SIGTERM, then SIGKILL after 2 s) when dropped.
#[derive(Default)]
pub struct Children(pub Vec<(String, Child)>);

impl Children {
    pub fn spawn(&mut self, name: &str, cmd: &mut Command) -> Res<u32> {
        let child = cmd.stdin(Stdio::null()).die_with_parent().spawn().map_err(|e| format!("cannot start {name}: {e}"))?;
        let pid = child.id();
        self.0.push((name.to_string(), child));
        Ok(pid)
    }

    pub fn pid(&self, name: &str) -> Option<u32> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, c)| c.id())
    }

    /// SIGTERM to every child, then waits (SIGKILL to any still running after 2 s).
    pub fn stop_all(&mut self) {
        for (_, c) in &self.0 {
            // SAFETY: signals to our own children's pids.
            unsafe {
                libc::kill(c.id() as i32, libc::SIGCONT);
                libc::kill(c.id() as i32, libc::SIGTERM);
            }
        }
        let until = Instant::now() + Duration::from_secs(2);
        for (_, c) in &mut self.0 {
            while Instant::now() < until && matches!(c.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        self.0.clear();
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Sends `signo` to `pid` (SIGSTOP / SIGCONT of a candidate).
pub fn signal(pid: u32, signo: i32) {
    // SAFETY: kill(2) with a pid of one of our children; no memory involved.
    unsafe { libc::kill(pid as i32, signo) };
}

/// A temporary directory, removed with everything in it when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(prefix: &str) -> Res<TempDir> {
        let base = std::env::var_os("TMPDIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp"));
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = base.join(format!("{prefix}.{}.{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
