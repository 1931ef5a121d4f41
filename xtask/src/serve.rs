//! A tiny static file server for `dist/`: GET and HEAD only, one thread per connection, files
//! below the root only (no `..`, symlinks out of the root refused), 404 for anything else. The
//! root can be mounted under a sub-path (`/a/b/`), as a static host's project folder is.

use anyhow::{Context, Result};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Server {
    addr: SocketAddr,
    prefix: String,
    thread: JoinHandle<()>,
}

impl Server {
    /// Serves `root` on 127.0.0.1:`port` (0: any free port) from a background thread.
    pub fn start(root: &Path, port: u16) -> Result<Server> {
        Server::start_under(root, port, "/")
    }

    /// Serves `root` at the sub-path `prefix` (`/a/b/`): `/a/b/x` is `root/x`; anything outside
    /// the prefix is 404.
    pub fn start_under(root: &Path, port: u16, prefix: &str) -> Result<Server> {
        let root = root
            .canonicalize()
            .with_context(|| format!("nothing to serve: {} does not exist", root.display()))?;
        let prefix = format!("/{}/", prefix.trim_matches('/')).replace("//", "/");
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let addr = listener.local_addr()?;
        let mount = prefix.clone();
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let root = root.clone();
                let mount = mount.clone();
                std::thread::spawn(move || {
                    // A client that hangs up early is not our problem.
                    let _ = handle(stream, &root, &mount);
                });
            }
        });
        Ok(Server {
            addr,
            prefix,
            thread,
        })
    }

    /// The served folder's URL, without a trailing slash (`http://127.0.0.1:8080`,
    /// `http://127.0.0.1:8080/a/b`).
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.prefix.trim_end_matches('/'))
    }

    /// Serves until the process is stopped.
    pub fn wait(self) {
        let _ = self.thread.join();
    }
}

fn handle(mut stream: TcpStream, root: &Path, prefix: &str) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // Skip the headers: nothing in them changes the answer.
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            b"method not allowed\n",
            true,
        );
    }
    let target = target
        .strip_prefix(prefix.trim_end_matches('/'))
        .unwrap_or("");
    match resolve(root, target).and_then(|path| Some((std::fs::read(&path).ok()?, path))) {
        Some((body, path)) => respond(
            &mut stream,
            "200 OK",
            content_type(&path),
            &body,
            method == "GET",
        ),
        None => respond(
            &mut stream,
            "404 Not Found",
            "text/plain; charset=utf-8",
            b"not found\n",
            method == "GET",
        ),
    }
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &[u8],
    with_body: bool,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    if with_body {
        stream.write_all(body)?;
    }
    stream.flush()
}

/// The file a request target names, if it is a file inside `root` (a canonical path).
fn resolve(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next()?;
    let decoded = percent_decode(path.strip_prefix('/')?)?;
    let mut file = root.to_path_buf();
    for segment in decoded.split('/').filter(|s| !s.is_empty() && *s != ".") {
        if segment == ".." || segment.contains('\\') || segment.contains('\0') {
            return None;
        }
        file.push(segment);
    }
    if file.is_dir() {
        file.push("index.html");
    }
    let file = file.canonicalize().ok()?;
    (file.starts_with(root) && file.is_file()).then_some(file)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn temp_root(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-serve-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("dist/sub")).unwrap();
        std::fs::write(dir.join("dist/index.html"), "<h1>hi</h1>").unwrap();
        std::fs::write(dir.join("dist/app_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
        std::fs::write(dir.join("dist/sub/a b.json"), "{}").unwrap();
        std::fs::write(dir.join("secret.txt"), "secret").unwrap();
        dir
    }

    fn get(server: &Server, target: &str) -> (String, String) {
        let mut stream = TcpStream::connect(server.addr).unwrap();
        write!(stream, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        (head.to_string(), body.to_string())
    }

    #[test]
    fn serves_files_with_their_types_and_refuses_the_rest() {
        let dir = temp_root("types");
        let server = Server::start(&dir.join("dist"), 0).unwrap();

        let (head, body) = get(&server, "/");
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(head.contains("Content-Type: text/html"), "{head}");
        assert_eq!(body, "<h1>hi</h1>");

        let (head, _) = get(&server, "/index.html?x=1#frag");
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");

        let (head, _) = get(&server, "/app_bg.wasm");
        assert!(head.contains("Content-Type: application/wasm"), "{head}");
        assert!(head.contains("Content-Length: 8"), "{head}");

        let (head, _) = get(&server, "/sub/a%20b.json");
        assert!(head.contains("Content-Type: application/json"), "{head}");

        for bad in [
            "/missing.js",
            "/../secret.txt",
            "/sub/../../secret.txt",
            "/%2e%2e/secret.txt",
            "/..%2fsecret.txt",
            "/%zz",
        ] {
            let (head, body) = get(&server, bad);
            assert!(head.starts_with("HTTP/1.1 404"), "{bad}: {head}");
            assert!(!body.contains("secret"), "{bad}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn serves_under_a_sub_path_only() {
        let dir = temp_root("prefix");
        let server = Server::start_under(&dir.join("dist"), 0, "/a/b/").unwrap();
        assert!(server.url().ends_with("/a/b"), "{}", server.url());
        let (head, body) = get(&server, "/a/b/");
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert_eq!(body, "<h1>hi</h1>");
        let (head, _) = get(&server, "/a/b/app_bg.wasm");
        assert!(head.contains("Content-Type: application/wasm"), "{head}");
        for bad in [
            "/",
            "/app_bg.wasm",
            "/a/app_bg.wasm",
            "/a/bapp_bg.wasm",
            "/a/b/../secret.txt",
        ] {
            let (head, _) = get(&server, bad);
            assert!(head.starts_with("HTTP/1.1 404"), "{bad}: {head}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlinks_out_of_the_root() {
        let dir = temp_root("symlink");
        std::os::unix::fs::symlink(dir.join("secret.txt"), dir.join("dist/link.txt")).unwrap();
        let server = Server::start(&dir.join("dist"), 0).unwrap();
        let (head, body) = get(&server, "/link.txt");
        assert!(head.starts_with("HTTP/1.1 404"), "{head}");
        assert!(!body.contains("secret"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_get_and_head() {
        let dir = temp_root("methods");
        let server = Server::start(&dir.join("dist"), 0).unwrap();
        let mut stream = TcpStream::connect(server.addr).unwrap();
        write!(stream, "POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        assert!(response.starts_with("HTTP/1.1 405"), "{response}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
