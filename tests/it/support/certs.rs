//! Certificates made with `openssl` at test time: a private CA and a server certificate it
//! signed, for `localhost`, `127.0.0.1` and `::1`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

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

impl Certs {
    /// The server's certificate chain and private key, as rustls takes them.
    fn chain_and_key(&self) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
        let chain = CertificateDer::pem_file_iter(&self.cert)
            .expect("read cert")
            .map(|c| c.expect("cert"))
            .collect();
        let key = PrivateKeyDer::from_pem_file(&self.key).expect("read key");
        (chain, key)
    }
}

impl Certs {
    /// A rustls server configuration serving the server certificate, offering HTTP/1.1.
    pub fn server_config(&self) -> rustls::ServerConfig {
        let (chain, key) = self.chain_and_key();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("server config");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        config
    }
}

impl Certs {
    /// As [`Certs::server_config`], demanding a client certificate the test CA signed.
    pub fn mutual_server_config(&self) -> rustls::ServerConfig {
        let (chain, key) = self.chain_and_key();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        for ca in CertificateDer::pem_file_iter(&self.ca).expect("read ca") {
            roots.add(ca.expect("ca")).expect("a CA");
        }
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .build()
        .expect("client verifier");
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain, key)
            .expect("server config");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        config
    }
}

/// The EC key options of every certificate made here.
const EC: [&str; 5] = [
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
];

/// A PEM certificate and its key, in a temp folder.
pub struct Pair {
    /// The certificate.
    pub cert: PathBuf,
    /// Its private key.
    pub key: PathBuf,
    /// The folder holding them.
    _dir: TempDir,
}

impl Pair {
    /// A self-signed certificate for localhost and 127.0.0.1 made the usual way, `openssl req
    /// -x509`: OpenSSL marks it a CA (`CA:TRUE`), as most such certificates in the wild are.
    pub fn self_signed() -> Pair {
        let openssl = require("openssl");
        let dir = TempDir::new();
        let (cert, key) = (dir.join("self.pem"), dir.join("self.key"));
        run_ok(
            Command::new(openssl)
                .args(["req", "-x509"])
                .args(EC)
                .arg("-keyout")
                .arg(&key)
                .arg("-out")
                .arg(&cert)
                .args(["-days", "1", "-subj", "/CN=localhost"])
                .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"]),
        );
        Pair {
            cert,
            key,
            _dir: dir,
        }
    }
}

impl Certs {
    /// A server whose certificate signed itself, made by `openssl req -x509` (so `CA:TRUE`):
    /// the CA to trust is the server's certificate itself, as some clusters hand it out.
    pub fn self_signed() -> Certs {
        let pair = Pair::self_signed();
        Certs {
            ca: pair.cert.clone(),
            cert: pair.cert,
            key: pair.key,
            _dir: pair._dir,
        }
    }
}

impl Certs {
    /// A certificate this CA signs for `cn` with `extensions` (an OpenSSL extension file's
    /// lines), valid from `start` to `end` (`YYYYMMDDHHMMSSZ`), or for a day from now.
    pub fn sign(&self, cn: &str, extensions: &str, dates: Option<(&str, &str)>) -> Pair {
        let openssl = require("openssl");
        let dir = TempDir::new();
        let (cert, key, csr, ext) = (
            dir.join("cert.pem"),
            dir.join("cert.key"),
            dir.join("cert.csr"),
            dir.join("cert.ext"),
        );
        let ca_key = self.ca.with_extension("key");
        run_ok(
            Command::new(&openssl)
                .arg("req")
                .args(EC)
                .arg("-keyout")
                .arg(&key)
                .arg("-out")
                .arg(&csr)
                .args(["-subj", &format!("/CN={cn}")]),
        );
        std::fs::write(&ext, extensions).expect("write extensions");
        match dates {
            None => run_ok(
                Command::new(&openssl)
                    .args(["x509", "-req", "-days", "1", "-set_serial", "3", "-in"])
                    .arg(&csr)
                    .arg("-CA")
                    .arg(&self.ca)
                    .arg("-CAkey")
                    .arg(&ca_key)
                    .arg("-extfile")
                    .arg(&ext)
                    .arg("-out")
                    .arg(&cert),
            ),
            // `openssl ca` is the tool that takes dates (OpenSSL 3.0's x509 has only -days).
            Some((start, end)) => {
                std::fs::write(dir.join("index.txt"), "").expect("index");
                std::fs::write(dir.join("serial"), "04\n").expect("serial");
                let config = dir.join("ca.cnf");
                std::fs::write(
                    &config,
                    format!(
                        "[ca]\ndefault_ca=d\n[d]\ndatabase={0}/index.txt\nnew_certs_dir={0}\n\
                         serial={0}/serial\ndefault_md=sha256\npolicy=p\ncopy_extensions=none\n\
                         [p]\ncommonName=supplied\n",
                        dir.0.display()
                    ),
                )
                .expect("ca config");
                run_ok(
                    Command::new(&openssl)
                        .args(["ca", "-batch", "-notext", "-config"])
                        .arg(&config)
                        .arg("-cert")
                        .arg(&self.ca)
                        .arg("-keyfile")
                        .arg(&ca_key)
                        .arg("-in")
                        .arg(&csr)
                        .arg("-extfile")
                        .arg(&ext)
                        .args(["-startdate", start, "-enddate", end, "-out"])
                        .arg(&cert),
                )
            }
        };
        Pair {
            cert,
            key,
            _dir: dir,
        }
    }

    /// A client certificate (extended key usage `clientAuth`) this CA signs for `cn`.
    pub fn client(&self, cn: &str) -> Pair {
        self.sign(
            cn,
            "basicConstraints=critical,CA:FALSE\n\
             keyUsage=critical,digitalSignature\n\
             extendedKeyUsage=clientAuth\n",
            None,
        )
    }

    /// A server certificate for localhost that expired in 2020.
    pub fn expired_localhost(&self) -> Pair {
        self.sign(
            "localhost",
            "subjectAltName=DNS:localhost,IP:127.0.0.1\n\
             basicConstraints=critical,CA:FALSE\n\
             extendedKeyUsage=serverAuth\n",
            Some(("20200101000000Z", "20200102000000Z")),
        )
    }
}
