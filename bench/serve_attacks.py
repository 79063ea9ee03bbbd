"""`readygate serve` under protocol attacks (docs/hardening.md, "serve"): each attack runs from
8 connections at once against a fresh `serve` on 127.0.0.1 while a well-behaved client asks
`GET /ready` every 50 ms on fresh connections; prints what serve did to the attackers, the
client's answers (p50, slowest) and serve's log length.
Usage: python3 bench/serve_attacks.py PATH/TO/readygate
"""
import socket, struct, sys, time, threading, subprocess, os
BIN=sys.argv[1]
def frame(t,f,s,p): return struct.pack('>I',len(p))[1:]+bytes([t,f])+struct.pack('>I',s&0x7fffffff)+p
def lit(n,v):
    def ln(x):
        return bytes([x]) if x<127 else bytes([127])+enc(x-127)
    def enc(r):
        out=b''
        while r>=128: out+=bytes([r%128|128]); r//=128
        return out+bytes([r])
    return b'\x00'+ln(len(n))+n+ln(len(v))+v
GET=lit(b':method',b'GET')+lit(b':scheme',b'http')+lit(b':path',b'/ready')+lit(b':authority',b'x')
PREFACE=b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'+frame(4,0,0,b'')

def start():
    t=socket.socket(); t.bind(('127.0.0.1',0)); t.listen(100)
    port=20000+os.getpid()%10000
    p=subprocess.Popen([BIN,'serve','--listen',f'127.0.0.1:{port}',f'tcp://127.0.0.1:{t.getsockname()[1]}'],stderr=subprocess.PIPE,text=True)
    while True:
        l=p.stderr.readline()
        if 'serving on' in l: break
    return p,('127.0.0.1',port),t

def kubelet(addr, stop, out):
    while not stop.is_set():
        t0=time.time()
        try:
            s=socket.create_connection(addr,timeout=5); s.sendall(b'GET /ready HTTP/1.1\r\nHost: x\r\n\r\n')
            d=b''
            while True:
                c=s.recv(4096)
                if not c: break
                d+=c
            out.append((time.time()-t0, d[:12]==b'HTTP/1.1 200'))
        except Exception as e:
            out.append((time.time()-t0, False))
        time.sleep(0.05)

def closed_after(s, limit):
    t0=time.time(); s.settimeout(limit)
    try:
        while True:
            c=s.recv(65536)
            if not c: return time.time()-t0
    except socket.timeout: return None
    except Exception: return time.time()-t0

def attack(name, fn, n=8, dur=5):
    p,addr,t=start()
    stop=threading.Event(); lat=[]
    k=threading.Thread(target=kubelet,args=(addr,stop,lat)); k.start()
    res=[]; ths=[]
    for i in range(n):
        th=threading.Thread(target=lambda: res.append(fn(addr))); th.start(); ths.append(th)
    for th in ths: th.join(dur+10)
    stop.set(); k.join()
    p.terminate(); err=p.communicate()[1]
    ok=sum(1 for l,o in lat if o); ls=sorted(l for l,o in lat)
    print(f"{name}: attacker results {sorted(set(str(r) for r in res))[:4]}; kubelet {ok}/{len(lat)} ok, p50 {1000*ls[len(ls)//2]:.1f} ms, max {1000*ls[-1]:.1f} ms; log lines {len(err.splitlines())}")
    sys.stdout.flush()

def slow_head(addr):
    s=socket.create_connection(addr)
    for b in b'GET /ready HTTP/1.1\r\nX-a: ' + b'a'*100:
        try: s.send(bytes([b]))
        except Exception: return 'closed-while-sending'
        time.sleep(0.05)
        s.settimeout(0.0)
        try:
            if s.recv(1)==b'': return 'closed'
        except BlockingIOError: pass
        except Exception: return 'closed'
    return 'never closed'
def slow_preface(addr):
    s=socket.create_connection(addr); t0=time.time()
    for b in PREFACE:
        try: s.send(bytes([b]))
        except Exception: return f'closed after {time.time()-t0:.1f}s'
        time.sleep(0.1)
    r=closed_after(s,10); return f'closed after {time.time()-t0:.1f}s' if r is not None else 'open'
def h2_silent(addr):
    s=socket.create_connection(addr); s.sendall(PREFACE); t0=time.time()
    r=closed_after(s,15); return f'closed after {r:.1f}s' if r is not None else 'open 15s'
def pipelining(addr):
    s=socket.create_connection(addr); s.sendall(b'GET /ready HTTP/1.1\r\nHost: x\r\n\r\n'*1000)
    d=b''; s.settimeout(5)
    try:
        while True:
            c=s.recv(65536)
            if not c: break
            d+=c
    except Exception as e: return 'err '+str(e)
    return f'{d.count(b"HTTP/1.1 ")} answers'
def settings_flood(addr):
    s=socket.create_connection(addr); s.sendall(PREFACE); t0=time.time(); sent=0
    try:
        for i in range(100):
            s.sendall(frame(4,0,0,struct.pack('>HI',3,100))*1000); sent+=1000
    except Exception: return f'closed after {sent} SETTINGS, {time.time()-t0:.1f}s'
    r=closed_after(s,10); return f'{sent} SETTINGS sent; closed after {r}'
def ping_flood(addr):
    s=socket.create_connection(addr); s.sendall(PREFACE); t0=time.time(); sent=0
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        for i in range(200):
            s.sendall(frame(6,0,0,b'\0'*8)*1000); sent+=1000
    except Exception: return f'closed after {sent} PINGs, {time.time()-t0:.1f}s'
    r=closed_after(s,10); return f'{sent} PINGs sent (never read); closed after {r}'
def continuation_flood(addr):
    s=socket.create_connection(addr); s.sendall(PREFACE+frame(1,0,1,GET)); t0=time.time(); sent=0
    more=lit(b'x-more',b'a'*32)
    try:
        for i in range(1000):
            s.sendall(frame(9,0,1,more)*100); sent+=100
    except Exception: return f'closed after {sent} CONTINUATIONs, {time.time()-t0:.2f}s'
    r=closed_after(s,10); return f'{sent} CONTINUATION sent; closed after {r}'
def continuation_empty(addr):
    s=socket.create_connection(addr); s.sendall(PREFACE+frame(1,0,1,GET)); t0=time.time(); sent=0
    try:
        for i in range(1000):
            s.sendall(frame(9,0,1,b'')*1000); sent+=1000
    except Exception: return f'closed after {sent} empty CONTINUATIONs, {time.time()-t0:.2f}s'
    r=closed_after(s,10); return f'{sent} empty CONTINUATION sent; closed after {r}'
def rapid_reset(addr):
    s=socket.create_connection(addr); out=PREFACE
    for i in range(500):
        sid=2*i+1; out+=frame(1,5,sid,GET)+frame(3,0,sid,struct.pack('>I',8))
    s.sendall(out); r=closed_after(s,10); return f'closed after {r}'
def window_zero(addr):
    # advertise a zero window: serve can never send its answer
    s=socket.create_connection(addr); s.sendall(b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'+frame(4,0,0,struct.pack('>HI',4,0))+frame(1,5,1,GET))
    r=closed_after(s,15); return f'closed after {r}'
def huge_window_data(addr):
    # data past the stream window on a GET
    s=socket.create_connection(addr); s.sendall(PREFACE+frame(1,4,1,GET)); sent=0
    try:
        for i in range(100):
            s.sendall(frame(0,0,1,b'a'*16384)); sent+=16384
    except Exception: return f'closed after {sent} bytes'
    r=closed_after(s,10); return f'{sent} bytes sent; closed after {r}'
for name,fn in [('slowloris head',slow_head),('slow h2 preface',slow_preface),('h2 preface then silence',h2_silent),('HTTP/1 pipelining x1000',pipelining),('SETTINGS flood',settings_flood),('PING flood, never read',ping_flood),('CONTINUATION flood',continuation_flood),('empty CONTINUATION flood',continuation_empty),('rapid reset',rapid_reset),('zero flow-control window',window_zero),('DATA past the window',huge_window_data)]:
    attack(name, fn)
