//! Certificates made with `openssl` at test time: a private CA and a server certificate it
//! signed, for `localhost`, `127.0.0.1` and `::1`.

use std::path::PathBuf;
use std::process::Command;

use super::daemon::{require, run_ok};
use super::TempDir;

/// A CA and the server certificate it signed, as PEM files in a temp folder.
pub struct Certs {
    /// The CA's certificate: what `--cacert` is given.
    pub ca: PathBuf,
    /// The server's certificate.
    pub cert: PathBuf,
    /// The server's private key.
    pub key: PathBuf,
    /// The folder holding them.
    _dir: TempDir,
}

impl Certs {
    /// Makes a fresh CA and a server certificate for localhost (valid for a day).
    pub fn localhost() -> Certs {
        let openssl = require("openssl");
        let dir = TempDir::new();
        let path = |name: &str| dir.join(name).to_str().expect("utf-8 path").to_string();
        let (ca, ca_key, csr, cert, key, ext) = (
            path("ca.pem"),
            path("ca.key"),
            path("server.csr"),
            path("server.pem"),
            path("server.key"),
            path("server.ext"),
        );
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        run_ok(
            Command::new(&openssl)
                .args(["req", "-x509"])
                .args(ec)
                .args([
                    "-keyout",
                    &ca_key,
                    "-out",
                    &ca,
                    "-days",
                    "1",
                    "-subj",
                    "/CN=readygate test CA",
                ]),
        );
        run_ok(Command::new(&openssl).arg("req").args(ec).args([
            "-keyout",
            &key,
            "-out",
            &csr,
            "-subj",
            "/CN=localhost",
        ]));
        std::fs::write(
            &ext,
            "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\n\
             basicConstraints=critical,CA:FALSE\n\
             keyUsage=critical,digitalSignature\n\
             extendedKeyUsage=serverAuth\n",
        )
        .expect("write extensions");
        run_ok(Command::new(&openssl).args([
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca,
            "-CAkey",
            &ca_key,
            "-set_serial",
            "2",
            "-days",
            "1",
            "-extfile",
            &ext,
            "-out",
            &cert,
        ]));
        Certs {
            ca: ca.into(),
            cert: cert.into(),
            key: key.into(),
            _dir: dir,
        }
    }
}
