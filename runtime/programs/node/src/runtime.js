// The Node-style runtime of `node`: evaluated once by main.rs to a factory
// `(native, argv, env) => rt`. main.rs drives `rt`: main(), then
// microtasks / afterMicrotasks(), next() (ms until the next timer, -1 if
// none), runOne(), beforeExit(), exitCode(); fatal(err) for uncaught errors.
(function (native, rawArgv, rawEnv) {
  'use strict';
  const G = globalThis;

  // ---- process basics ---------------------------------------------------
  const env = {};
  for (let i = 0; i + 1 < rawEnv.length; i += 2) env[rawEnv[i]] = rawEnv[i + 1];
  let cwd = env.PWD && env.PWD.startsWith('/') ? env.PWD : '/';
  try { native.chdir(cwd); } catch (_) { cwd = '/'; }

  // ---- path -------------------------------------------------------------
  function normalizeParts(p, absolute) {
    const out = [];
    for (const seg of p.split('/')) {
      if (seg === '' || seg === '.') continue;
      if (seg === '..') {
        if (out.length && out[out.length - 1] !== '..') out.pop();
        else if (!absolute) out.push('..');
      } else out.push(seg);
    }
    return out;
  }
  const path = {
    sep: '/',
    delimiter: ':',
    normalize(p) {
      if (p === '') return '.';
      const abs = p.startsWith('/');
      const trailing = p.endsWith('/');
      let s = normalizeParts(p, abs).join('/');
      if (!s && !abs) s = '.';
      if (s && trailing) s += '/';
      return (abs ? '/' : '') + s;
    },
    join(...parts) {
      const s = parts.filter((x) => { checkString(x, 'path'); return x !== ''; }).join('/');
      return s === '' ? '.' : path.normalize(s);
    },
    resolve(...parts) {
      let r = '';
      for (let i = parts.length - 1; i >= -1 && !r.startsWith('/'); i--) {
        const p = i >= 0 ? parts[i] : cwd;
        checkString(p, 'paths[' + i + ']');
        if (p !== '') r = p + (r ? '/' + r : '');
      }
      return '/' + normalizeParts(r, true).join('/');
    },
    isAbsolute: (p) => p.startsWith('/'),
    dirname(p) {
      checkString(p, 'path');
      if (p === '') return '.';
      let end = p.length;
      while (end > 1 && p[end - 1] === '/') end--;
      const i = p.lastIndexOf('/', end - 1);
      if (i < 0) return '.';
      if (i === 0) return '/';
      let j = i;
      while (j > 1 && p[j - 1] === '/') j--;
      return p.slice(0, j);
    },
    basename(p, ext) {
      checkString(p, 'path');
      let end = p.length;
      while (end > 1 && p[end - 1] === '/') end--;
      let b = p.slice(p.lastIndexOf('/', end - 1) + 1, end);
      if (b === '/') b = '';
      if (ext && b.endsWith(ext) && b !== ext) b = b.slice(0, b.length - ext.length);
      return b;
    },
    extname(p) {
      const b = path.basename(p);
      const i = b.lastIndexOf('.');
      return i <= 0 ? '' : b.slice(i);
    },
    relative(from, to) {
      const a = normalizeParts(path.resolve(from), true);
      const b = normalizeParts(path.resolve(to), true);
      let i = 0;
      while (i < a.length && i < b.length && a[i] === b[i]) i++;
      return [...a.slice(i).map(() => '..'), ...b.slice(i)].join('/');
    },
    parse(p) {
      const base = path.basename(p);
      const ext = path.extname(p);
      const dir = p.includes('/') ? path.dirname(p) : '';
      return { root: p.startsWith('/') ? '/' : '', dir, base, ext, name: ext ? base.slice(0, -ext.length) : base };
    },
    format(o) {
      const dir = o.dir || o.root || '';
      const base = o.base || (o.name || '') + (o.ext || '');
      return dir ? (dir === o.root ? dir + base : dir + '/' + base) : base;
    },
    toNamespacedPath: (p) => p,
  };
  path.posix = path;

  function checkString(v, name) {
    if (typeof v !== 'string') {
      const e = new TypeError(`The "${name}" argument must be of type string. Received ${describeReceived(v)}`);
      e.code = 'ERR_INVALID_ARG_TYPE';
      throw e;
    }
  }
  function describeReceived(v) {
    if (v == null) return String(v);
    if (typeof v === 'function') return `function ${v.name}`;
    if (typeof v === 'object') return v.constructor && v.constructor.name ? `an instance of ${v.constructor.name}` : inspect(v);
    return `type ${typeof v} (${inspect(v)})`;
  }

  // ---- Buffer -----------------------------------------------------------
  const u8 = (ab) => new Uint8Array(ab);
  class Buffer extends Uint8Array {
    static from(v, enc) {
      if (typeof v === 'string') return Buffer._str(v, enc);
      if (v instanceof ArrayBuffer) return new Buffer(v);
      if (ArrayBuffer.isView(v)) { const b = new Buffer(v.length); b.set(v); return b; }
      if (Array.isArray(v)) { const b = new Buffer(v.length); b.set(v.map((x) => x & 255)); return b; }
      if (v && v.type === 'Buffer' && Array.isArray(v.data)) return Buffer.from(v.data);
      throw new TypeError('The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object.');
    }
    static _str(s, enc) {
      enc = (enc || 'utf8').toLowerCase();
      if (enc === 'hex') {
        const b = new Buffer(s.length >> 1);
        for (let i = 0; i < b.length; i++) b[i] = parseInt(s.substr(i * 2, 2), 16);
        return b;
      }
      if (enc === 'base64' || enc === 'base64url') {
        const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/').replace(/[^A-Za-z0-9+/]/g, ''));
        const b = new Buffer(bin.length);
        for (let i = 0; i < bin.length; i++) b[i] = bin.charCodeAt(i);
        return b;
      }
      if (enc === 'latin1' || enc === 'binary' || enc === 'ascii') {
        const b = new Buffer(s.length);
        for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i);
        return b;
      }
      return new Buffer(native.utf8Encode(s));
    }
    static alloc(n, fill) { const b = new Buffer(n); if (fill !== undefined) b.fill(typeof fill === 'string' ? fill.charCodeAt(0) : fill); return b; }
    static allocUnsafe(n) { return new Buffer(n); }
    static isBuffer(b) { return b instanceof Buffer; }
    static isEncoding(e) { return ['utf8', 'utf-8', 'hex', 'base64', 'base64url', 'latin1', 'binary', 'ascii'].includes(String(e).toLowerCase()); }
    static byteLength(s, enc) { return typeof s === 'string' ? Buffer.from(s, enc).length : s.byteLength; }
    static concat(list, total) {
      if (total === undefined) total = list.reduce((n, b) => n + b.length, 0);
      const out = Buffer.alloc(total);
      let off = 0;
      for (const b of list) { if (off >= total) break; out.set(b.subarray(0, total - off), off); off += b.length; }
      return out;
    }
    toString(enc, start, end) {
      const v = this.subarray(start || 0, end === undefined ? this.length : end);
      enc = (enc || 'utf8').toLowerCase();
      if (enc === 'hex') return Array.from(v, (x) => x.toString(16).padStart(2, '0')).join('');
      if (enc === 'base64' || enc === 'base64url') {
        let bin = '';
        for (const x of v) bin += String.fromCharCode(x);
        const s = btoa(bin);
        return enc === 'base64' ? s : s.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
      }
      if (enc === 'latin1' || enc === 'binary' || enc === 'ascii') return Array.from(v, (x) => String.fromCharCode(enc === 'ascii' ? x & 127 : x)).join('');
      return native.utf8Decode(v);
    }
    toJSON() { return { type: 'Buffer', data: Array.from(this) }; }
    equals(o) { return this.length === o.length && this.every((x, i) => x === o[i]); }
    write(s, off) { const b = Buffer.from(s); this.set(b.subarray(0, this.length - (off || 0)), off || 0); return Math.min(b.length, this.length - (off || 0)); }
    slice(a, b) { const s = this.subarray(a, b); return new Buffer(s.buffer, s.byteOffset, s.length); }
    subarray(a, b) { const s = Uint8Array.prototype.subarray.call(this, a, b); return Object.setPrototypeOf(s, Buffer.prototype); }
    static get [Symbol.species]() { return Buffer; }
  }
  const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  function btoa(s) {
    s = String(s);
    let out = '';
    for (let i = 0; i < s.length; i += 3) {
      const a = s.charCodeAt(i), b = s.charCodeAt(i + 1), c = s.charCodeAt(i + 2);
      if (a > 255 || b > 255 || c > 255) throw new Error('Invalid character');
      const n = (a << 16) | ((b || 0) << 8) | (c || 0);
      out += b64[n >> 18] + b64[(n >> 12) & 63] + (i + 1 < s.length ? b64[(n >> 6) & 63] : '=') + (i + 2 < s.length ? b64[n & 63] : '=');
    }
    return out;
  }
  function atob(s) {
    s = String(s).replace(/[\s=]/g, '');
    let out = '', bits = 0, n = 0;
    for (const ch of s) {
      const v = b64.indexOf(ch);
      if (v < 0) throw new Error('Invalid character');
      n = (n << 6) | v; bits += 6;
      if (bits >= 8) { bits -= 8; out += String.fromCharCode((n >> bits) & 255); }
    }
    return out;
  }

  // ---- util.inspect -----------------------------------------------------
  const kArrayExtras = 2;
  function quote(s) {
    let q = "'";
    if (s.includes("'")) q = !s.includes('"') ? '"' : !s.includes('`') && !s.includes('${') ? '`' : "'";
    const esc = s.replace(/[\x00-\x1f\x7f\\]/g, (c) => ({ '\n': '\\n', '\t': '\\t', '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\\': '\\\\' })[c] || '\\x' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'));
    return q + (q === "'" ? esc.replace(/'/g, "\\'") : esc) + q;
  }
  const identRe = /^[a-zA-Z_][a-zA-Z_0-9]*$/;
  function fmtKey(k) {
    if (typeof k === 'symbol') return '[' + k.toString() + ']';
    return identRe.test(k) ? k : quote(k);
  }
  function fmtPrimitive(v) {
    switch (typeof v) {
      case 'string': return quote(v);
      case 'number': return Object.is(v, -0) ? '-0' : String(v);
      case 'bigint': return v + 'n';
      case 'symbol': return v.toString();
      default: return String(v);
    }
  }
  function ctorName(o) {
    let p = o;
    while (p) {
      const d = Object.getOwnPropertyDescriptor(p, 'constructor');
      if (d && typeof d.value === 'function' && d.value.name) return d.value.name;
      p = Object.getPrototypeOf(p);
    }
    return null;
  }
  function fmtError(e) {
    let s = e.stack && typeof e.stack === 'string' ? e.stack : '';
    const head = errorHead(e);
    const frames = s.split('\n')
      .filter((l) => /^\s+at /.test(l) && !l.includes('node:internal/') && !l.includes('(native)'))
      .map((l) => l.replace(/:\?:\?\)$/, ')').replace(/^(\s+at )<main> \((.*)\)$/, '$1$2'));
    return [head, ...frames.slice(0, 10)].join('\n');
  }
  function errorHead(e) {
    if (e && e.name === 'RuntimeLimitError' && /recursi|stack/i.test(e.message)) return 'RangeError: Maximum call stack size exceeded';
    let name;
    try { name = e.name; } catch (_) { name = 'Error'; }
    let msg;
    try { msg = e.message; } catch (_) { msg = ''; }
    return msg ? `${name}: ${msg}` : String(name);
  }
  function groupArrayElements(ctx, output, value) {
    let totalLength = 0, maxLength = 0;
    let outputLength = output.length;
    if (ctx.extra) outputLength--;
    const sep = 2;
    const dataLen = new Array(outputLength);
    for (let i = 0; i < outputLength; i++) {
      const len = output[i].length;
      dataLen[i] = len;
      totalLength += len + sep;
      if (maxLength < len) maxLength = len;
    }
    const actualMax = maxLength + sep;
    if (actualMax * 3 + ctx.indentationLvl < ctx.breakLength && (totalLength / actualMax > 5 || maxLength <= 6)) {
      const averageBias = Math.sqrt(actualMax - totalLength / output.length);
      const biasedMax = Math.max(actualMax - 3 - averageBias, 1);
      const columns = Math.min(Math.round(Math.sqrt(2.5 * biasedMax * outputLength) / biasedMax), Math.floor((ctx.breakLength - ctx.indentationLvl) / actualMax), 3 * 4, 15);
      if (columns <= 1) return output;
      const tmp = [];
      const maxLineLength = [];
      for (let i = 0; i < columns; i++) {
        let lineLength = 0;
        for (let j = i; j < output.length; j += columns) if (dataLen[j] > lineLength) lineLength = dataLen[j];
        maxLineLength.push(lineLength + sep);
      }
      let padStart = true;
      if (value !== undefined) {
        for (let i = 0; i < output.length; i++) {
          if (typeof value[i] !== 'number' && typeof value[i] !== 'bigint') { padStart = false; break; }
        }
      }
      for (let i = 0; i < outputLength; i += columns) {
        const max = Math.min(i + columns, outputLength);
        let str = '';
        let j = i;
        for (; j < max - 1; j++) {
          const s = `${output[j]}, `;
          str += padStart ? s.padStart(maxLineLength[j - i], ' ') : s.padEnd(maxLineLength[j - i], ' ');
        }
        str += padStart ? output[j].padStart(maxLineLength[j - i] - sep, ' ') : output[j];
        tmp.push(str);
      }
      if (ctx.extra) tmp.push(output[outputLength]);
      output = tmp;
    }
    return output;
  }
  function isBelowBreakLength(ctx, output, start, base) {
    let total = output.length + start;
    if (total + output.length > ctx.breakLength) return false;
    for (const o of output) { total += o.length; if (total > ctx.breakLength) return false; }
    return base === '' || !base.includes('\n');
  }
  function reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value) {
    const entries = output.length;
    if (extrasType === kArrayExtras && entries > 6) output = groupArrayElements(ctx, output, value);
    if (ctx.currentDepth - recurseTimes < ctx.compact && entries === output.length) {
      const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
      if (isBelowBreakLength(ctx, output, start, base)) {
        const joined = output.join(', ');
        if (!joined.includes('\n')) return `${base ? `${base} ` : ''}${braces[0]} ${joined} ${braces[1]}`;
      }
    }
    const ind = '\n' + ' '.repeat(ctx.indentationLvl);
    return `${base ? `${base} ` : ''}${braces[0]}${ind}  ${output.join(`,${ind}  `)}${ind}${braces[1]}`;
  }
  const customInspect = Symbol.for('nodejs.util.inspect.custom');
  function formatValue(ctx, v, recurseTimes, typedArray) {
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return fmtPrimitive(v);
    if (ctx.seen.includes(v)) { ctx.circular.add(v); return '[Circular *1]'; }
    const custom = v[customInspect];
    if (typeof custom === 'function' && custom !== inspect) {
      const r = custom.call(v, recurseTimes, Object.assign({}, ctx), inspect);
      if (r !== v) return typeof r === 'string' ? r : formatValue(ctx, r, recurseTimes);
    }
    return formatRaw(ctx, v, recurseTimes);
  }
  function formatRaw(ctx, v, recurseTimes) {
    const name = ctorName(v);
    let keys = Object.keys(v);
    const syms = Object.getOwnPropertySymbols(v).filter((s) => Object.prototype.propertyIsEnumerable.call(v, s));
    let braces, base = '', extrasType = 0, formatter = null, noEntries = false;
    const prefix = (fallback, size) => {
      const n = name || `[${fallback}: null prototype]`;
      return n === fallback && size === undefined ? '' : size === undefined ? `${n} ` : `${n}(${size}) `;
    };
    if (Array.isArray(v)) {
      keys = keys.filter((k) => !(String(k >>> 0) === k && k >>> 0 < v.length));
      braces = [`${name === 'Array' ? '' : prefix('Array', v.length)}[`, ']'];
      extrasType = kArrayExtras;
      formatter = formatArray;
      if (v.length === 0 && keys.length === 0 && syms.length === 0) return `${braces[0]}]`;
    } else if (typeof v === 'function') {
      base = fmtFunction(v, name);
      keys = keys.filter((k) => k !== 'prototype');
      if (keys.length === 0 && syms.length === 0) return base;
      braces = ['{', '}'];
    } else if (v instanceof Error) {
      base = fmtError(v);
      if (ctx.indentationLvl) base = base.replace(/\n/g, '\n' + ' '.repeat(ctx.indentationLvl));
      keys = keys.filter((k) => k !== 'stack' && k !== 'message');
      if (keys.length === 0 && syms.length === 0) return base;
      braces = ['{', '}'];
    } else if (v instanceof RegExp) {
      base = RegExp.prototype.toString.call(v);
      if (keys.length === 0) return base;
      braces = ['{', '}'];
    } else if (v instanceof Date) {
      base = isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();
      if (keys.length === 0) return base;
      braces = ['{', '}'];
    } else if (v instanceof Map) {
      braces = [`${prefix('Map', v.size)}{`, '}'];
      formatter = (ctx, v, rt) => [...v].map(([k, x]) => `${formatValue(ctx, k, rt)} => ${formatValue(ctx, x, rt)}`);
      noEntries = v.size === 0;
    } else if (v instanceof Set) {
      braces = [`${prefix('Set', v.size)}{`, '}'];
      formatter = (ctx, v, rt) => [...v].map((x) => formatValue(ctx, x, rt));
      noEntries = v.size === 0;
    } else if (v instanceof Buffer) {
      const hex = Array.from(v.subarray(0, 50), (x) => x.toString(16).padStart(2, '0')).join(' ');
      return `<Buffer${hex ? ' ' + hex : ''}${v.length > 50 ? ` ... ${v.length - 50} more bytes` : ''}>`;
    } else if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
      keys = keys.filter((k) => !(String(k >>> 0) === k));
      braces = [`${prefix(name || 'TypedArray', v.length)}[`, ']'];
      extrasType = kArrayExtras;
      formatter = formatArray;
      if (v.length === 0 && keys.length === 0) return `${braces[0]}]`;
    } else if (v instanceof ArrayBuffer) {
      const hex = Array.from(new Uint8Array(v).subarray(0, 50), (x) => x.toString(16).padStart(2, '0')).join(' ');
      return `ArrayBuffer { [Uint8Contents]: <${hex}>, byteLength: ${v.byteLength} }`;
    } else if (v instanceof Promise) {
      const st = native.promiseState(v);
      const inner = st === 'pending' ? '<pending>' : st === 'rejected' ? `<rejected> ${formatValue(ctx, native.promiseResult(v), recurseTimes)}` : formatValue(ctx, native.promiseResult(v), recurseTimes);
      braces = ['Promise {', '}'];
      formatter = () => [inner];
    } else if (v instanceof WeakMap || v instanceof WeakSet) {
      return `${name} { <items unknown> }`;
    } else if (typeof v === 'object' && (v instanceof Boolean || v instanceof Number || v instanceof String)) {
      const t = v instanceof Boolean ? 'Boolean' : v instanceof Number ? 'Number' : 'String';
      base = `[${t}: ${fmtPrimitive(v.valueOf())}]`;
      if (t === 'String') keys = keys.filter((k) => !(String(k >>> 0) === k));
      if (keys.length === 0) return base;
      braces = ['{', '}'];
    } else {
      const tag = v[Symbol.toStringTag];
      let p = name === 'Object' ? '' : name === null ? '[Object: null prototype] ' : `${name} `;
      if (typeof tag === 'string' && tag !== '' && tag !== name) p = `${p || 'Object '}[${tag}] `;
      if (keys.length === 0 && syms.length === 0) return `${p}{}`;
      braces = [`${p}{`, '}'];
    }
    if (recurseTimes > ctx.depth && ctx.depth !== null) {
      return `[${name || 'Object'}]`.replace(/^\[Array\]$/, '[Array]');
    }
    recurseTimes++;
    ctx.seen.push(v);
    ctx.currentDepth = recurseTimes;
    let output;
    try {
      output = formatter ? formatter(ctx, v, recurseTimes) : [];
      for (const k of keys) output.push(formatProp(ctx, v, recurseTimes, k, extrasType));
      for (const s of syms) output.push(formatProp(ctx, v, recurseTimes, s, extrasType));
    } finally {
      ctx.seen.pop();
    }
    if (noEntries && output.length === 0) return `${braces[0]}}`;
    const res = reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, v);
    return ctx.circular.has(v) ? `<ref *1> ${res}` : res;
  }
  function fmtFunction(f, name) {
    const pd = Object.getOwnPropertyDescriptor(f, 'prototype');
    let type = 'Function';
    if (pd && !pd.writable && !(f.name && G[f.name] === f)) type = 'class';
    else if (name === 'AsyncFunction') type = 'AsyncFunction';
    else if (name === 'GeneratorFunction') type = 'GeneratorFunction';
    else if (name === 'AsyncGeneratorFunction') type = 'AsyncGeneratorFunction';
    if (type === 'class') {
      const sup = Object.getPrototypeOf(f);
      return `[class ${f.name || '(anonymous)'}${sup !== Function.prototype && sup && sup.name ? ` extends ${sup.name}` : ''}]`;
    }
    return f.name ? `[${type}: ${f.name}]` : `[${type} (anonymous)]`;
  }
  function formatArray(ctx, v, recurseTimes) {
    const out = [];
    const max = Math.min(100, v.length);
    let holes = 0;
    for (let i = 0; i < max; i++) {
      if (!Object.prototype.hasOwnProperty.call(v, i) && !ArrayBuffer.isView(v)) { holes++; continue; }
      if (holes) { out.push(`<${holes} empty item${holes > 1 ? 's' : ''}>`); holes = 0; }
      out.push(formatValue(ctx, v[i], recurseTimes));
    }
    if (holes) out.push(`<${holes} empty item${holes > 1 ? 's' : ''}>`);
    ctx.extra = false;
    if (v.length > max) { out.push(`... ${v.length - max} more item${v.length - max > 1 ? 's' : ''}`); ctx.extra = true; }
    return out;
  }
  function formatProp(ctx, v, recurseTimes, key, extrasType) {
    const d = Object.getOwnPropertyDescriptor(v, key) || { value: v[key], enumerable: true };
    let str;
    if (d.value !== undefined || !('get' in d)) {
      const diff = ctx.compact !== true ? 2 : 3;
      ctx.indentationLvl += diff;
      str = formatValue(ctx, d.value, recurseTimes);
      ctx.indentationLvl -= diff;
    } else if (d.get) {
      str = d.set ? '[Getter/Setter]' : '[Getter]';
    } else {
      str = d.set ? '[Setter]' : 'undefined';
    }
    return `${fmtKey(key)}: ${str}`;
  }
  function inspect(v, opts) {
    const ctx = { seen: [], circular: new Set(), indentationLvl: 0, currentDepth: 0, depth: 2, compact: 3, breakLength: 80 };
    if (opts && typeof opts === 'object') {
      if ('depth' in opts) ctx.depth = opts.depth === Infinity ? null : opts.depth;
      if (opts.breakLength) ctx.breakLength = opts.breakLength;
      if (opts.compact !== undefined) ctx.compact = opts.compact === false ? 0 : opts.compact === true ? 3 : opts.compact;
    }
    return formatValue(ctx, v, 0);
  }
  inspect.custom = customInspect;
  function format(...args) {
    let out = '';
    let i = 0;
    if (typeof args[0] === 'string') {
      const f = args[0];
      i = 1;
      let last = 0;
      for (let j = 0; j < f.length - 1; j++) {
        if (f[j] !== '%') continue;
        const c = f[j + 1];
        let rep;
        if (c === '%') { out += f.slice(last, j) + '%'; last = j + 2; j++; continue; }
        if (i >= args.length || !'sdifjoOc'.includes(c)) continue;
        const a = args[i];
        switch (c) {
          case 's': rep = typeof a === 'string' ? a : typeof a === 'bigint' ? a + 'n' : typeof a === 'object' && a !== null ? inspect(a, { depth: 0 }) : fmtPrimitive(a); break;
          case 'd': case 'i': rep = typeof a === 'bigint' ? a + 'n' : typeof a === 'symbol' ? 'NaN' : String(c === 'i' ? parseInt(a) : Number(a)); break;
          case 'f': rep = String(parseFloat(a)); break;
          case 'j': try { rep = JSON.stringify(a); } catch (_) { rep = '[Circular]'; } break;
          case 'o': case 'O': rep = inspect(a); break;
          case 'c': rep = ''; break;
        }
        i++;
        out += f.slice(last, j) + rep;
        last = j + 2;
        j++;
      }
      out += f.slice(last);
    }
    for (; i < args.length; i++) {
      const a = args[i];
      out += (out || i > 0 ? ' ' : '') + (typeof a === 'string' ? a : inspect(a));
    }
    return out;
  }

  // ---- errors -----------------------------------------------------------
  const errnoText = {
    ENOENT: [-2, 'no such file or directory'], EEXIST: [-17, 'file already exists'], EACCES: [-13, 'permission denied'],
    ENOTDIR: [-20, 'not a directory'], EISDIR: [-21, 'illegal operation on a directory'], ENOTEMPTY: [-39, 'directory not empty'],
    EINVAL: [-22, 'invalid argument'], ENOSPC: [-28, 'no space left on device'], EDQUOT: [-122, 'disk quota exceeded'],
    EROFS: [-30, 'read-only file system'], EXDEV: [-18, 'cross-device link not permitted'], ENOSYS: [-38, 'function not implemented'],
    ENAMETOOLONG: [-36, 'name too long'], EIO: [-5, 'i/o error'], ETIMEDOUT: [-110, 'connection timed out'],
    EAGAIN: [-11, 'resource temporarily unavailable'],
  };
  function sysError(raw, syscall, p, dest) {
    if (typeof raw !== 'string') return raw;
    const code = raw.split(':')[0];
    const [errno, text] = errnoText[code] || [-5, 'i/o error'];
    const e = new Error(`${code}: ${text}, ${syscall}${p !== undefined ? ` '${p}'` : ''}${dest !== undefined ? ` -> '${dest}'` : ''}`);
    e.errno = errno; e.code = code; e.syscall = syscall;
    if (p !== undefined) e.path = p;
    if (dest !== undefined) e.dest = dest;
    return e;
  }
  function sys(syscall, p, f, dest) {
    try { return f(); } catch (raw) { throw sysError(raw, syscall, p, dest); }
  }

  // ---- fs ---------------------------------------------------------------
  function pathArg(p) {
    if (p instanceof URL) p = p.pathname;
    if (p instanceof Uint8Array) p = native.utf8Decode(p);
    checkString(p, 'path');
    return p;
  }
  const abs = (p) => path.resolve(pathArg(p));
  function encOf(o) { return typeof o === 'string' ? o : o && o.encoding; }
  function decode(bytes, enc) {
    const b = new Buffer(bytes);
    return enc && enc !== 'buffer' ? b.toString(enc) : b;
  }
  class Stats {
    constructor(a) {
      this._kind = a[0];
      this.dev = 0; this.mode = a[0] === 'dir' ? 0o40755 : a[0] === 'symlink' ? 0o120777 : 0o100644;
      this.nlink = 1; this.uid = 0; this.gid = 0; this.rdev = 0; this.blksize = 4096; this.ino = 0;
      this.size = a[1]; this.blocks = Math.ceil(a[1] / 512);
      this.mtimeMs = a[2]; this.atimeMs = a[3]; this.ctimeMs = a[2]; this.birthtimeMs = a[4];
      this.mtime = new Date(a[2]); this.atime = new Date(a[3]); this.ctime = new Date(a[2]); this.birthtime = new Date(a[4]);
      Object.defineProperty(this, '_kind', { enumerable: false });
    }
    isFile() { return this._kind === 'file'; }
    isDirectory() { return this._kind === 'dir'; }
    isSymbolicLink() { return this._kind === 'symlink'; }
    isFIFO() { return false; } isSocket() { return false; } isBlockDevice() { return false; } isCharacterDevice() { return false; }
  }
  class Dirent {
    constructor(name, kind, parent) { this.name = name; this.parentPath = parent; this.path = parent; Object.defineProperty(this, '_kind', { value: kind }); }
    isFile() { return this._kind === 'file'; }
    isDirectory() { return this._kind === 'dir'; }
    isSymbolicLink() { return this._kind === 'symlink'; }
    isFIFO() { return false; } isSocket() { return false; } isBlockDevice() { return false; } isCharacterDevice() { return false; }
  }
  function toBytes(data, enc) {
    if (typeof data === 'string') return enc && enc !== 'utf8' && enc !== 'utf-8' ? Buffer.from(data, enc) : data;
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    checkString(data, 'data');
  }
  const fs = {
    constants: { F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1 },
    F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1,
    readFileSync(p, o) {
      if (p === 0 || p === '/dev/stdin') return decode(native.readStdin(), encOf(o));
      const a = abs(p);
      return decode(sys('open', pathArg(p), () => native.readFile(a)), encOf(o));
    },
    writeFileSync(p, data, o) {
      const a = abs(p);
      const flag = (o && o.flag) || 'w';
      if (p === 1 || p === 2) return void native.write(p, toBytes(data, encOf(o)));
      sys('open', pathArg(p), () => native.writeFile(a, toBytes(data, encOf(o)), flag));
    },
    appendFileSync(p, data, o) {
      const a = abs(p);
      sys('open', pathArg(p), () => native.writeFile(a, toBytes(data, encOf(o)), 'a'));
    },
    existsSync(p) {
      try { native.stat(abs(p), true); return true; } catch (_) { return false; }
    },
    accessSync(p) { const a = abs(p); sys('access', pathArg(p), () => native.stat(a, true)); },
    statSync(p, o) {
      const a = abs(p);
      try { return new Stats(native.stat(a, true)); } catch (raw) {
        if (o && o.throwIfNoEntry === false && raw === 'ENOENT') return undefined;
        throw sysError(raw, 'stat', pathArg(p));
      }
    },
    lstatSync(p) { const a = abs(p); return new Stats(sys('lstat', pathArg(p), () => native.stat(a, false))); },
    readdirSync(p, o) {
      const a = abs(p);
      const list = sys('scandir', pathArg(p), () => native.readdir(a));
      if (o && o.withFileTypes) return list.map(([n, k]) => new Dirent(n, k, pathArg(p)));
      if (o && o.recursive) {
        const out = [];
        const walk = (rel, entries) => {
          for (const [n, k] of entries) {
            const r = rel ? rel + '/' + n : n;
            out.push(r);
            if (k === 'dir') walk(r, native.readdir(a + '/' + r));
          }
        };
        walk('', list);
        return out;
      }
      return list.map((e) => e[0]);
    },
    mkdirSync(p, o) {
      const a = abs(p);
      const recursive = o && typeof o === 'object' && o.recursive;
      if (!recursive) return void sys('mkdir', pathArg(p), () => native.mkdir(a));
      let first;
      const parts = a.split('/').filter(Boolean);
      let cur = '';
      for (const part of parts) {
        cur += '/' + part;
        let st = null;
        try { st = native.stat(cur, true); } catch (_) { /* missing */ }
        if (st) {
          if (st[0] !== 'dir') throw sysError('ENOTDIR', 'mkdir', pathArg(p));
          continue;
        }
        sys('mkdir', pathArg(p), () => native.mkdir(cur));
        if (first === undefined) first = cur;
      }
      return first;
    },
    unlinkSync(p) { const a = abs(p); sys('unlink', pathArg(p), () => native.unlink(a)); },
    rmdirSync(p, o) { if (o && o.recursive) return fs.rmSync(p, o); const a = abs(p); sys('rmdir', pathArg(p), () => native.rmdir(a)); },
    rmSync(p, o) {
      const a = abs(p);
      let st;
      try { st = native.stat(a, false); } catch (raw) {
        if (o && o.force) return;
        throw sysError(raw, 'rm', pathArg(p));
      }
      if (st[0] === 'dir') {
        if (!(o && o.recursive)) { const e = new Error(`Path is a directory: rm returned EISDIR (is a directory) ${pathArg(p)}`); e.code = 'ERR_FS_EISDIR'; throw e; }
        for (const [n] of native.readdir(a)) fs.rmSync(a + '/' + n, o);
        sys('rmdir', pathArg(p), () => native.rmdir(a));
      } else sys('unlink', pathArg(p), () => native.unlink(a));
    },
    renameSync(f, t) { const a = abs(f), b = abs(t); sys('rename', pathArg(f), () => native.rename(a, b), pathArg(t)); },
    copyFileSync(f, t) { const a = abs(f), b = abs(t); const d = sys('copyfile', pathArg(f), () => native.readFile(a), pathArg(t)); sys('copyfile', pathArg(f), () => native.writeFile(b, new Uint8Array(d), 'w'), pathArg(t)); },
    symlinkSync(target, p) { const a = abs(p); sys('symlink', target, () => native.symlink(target, a), pathArg(p)); },
    readlinkSync(p) { const a = abs(p); return sys('readlink', pathArg(p), () => native.readlink(a)); },
    realpathSync(p) { return abs(p); },
    mkdtempSync(prefix) {
      for (;;) {
        const cand = prefix + Array.from(native.randomBytes !== undefined ? new Uint8Array(native.randomBytes(6)) : [], (x) => 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'[x % 62]).join('');
        if (!fs.existsSync(cand)) { fs.mkdirSync(cand); return cand; }
      }
    },
    chmodSync() {}, chownSync() {}, utimesSync() {},
    openSync(p, flags) { return { __fd: true, path: abs(p), flags: flags || 'r', pending: '' }; },
    writeSync(fd, data) {
      const bytes = toBytes(typeof data === 'number' ? String(data) : data);
      if (fd === 1 || fd === 2) native.write(fd, bytes);
      else if (fd && fd.__fd) { native.writeFile(fd.path, bytes, fd.flags.startsWith('a') || fd.written ? 'a' : 'w'); fd.written = true; }
      return typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
    },
    closeSync() {},
    fsyncSync() {},
    createWriteStream(p, o) {
      const a = abs(p);
      native.writeFile(a, '', (o && o.flags) || 'w');
      const s = new EventEmitter();
      s.write = (d, enc, cb) => { native.writeFile(a, toBytes(d, typeof enc === 'string' ? enc : undefined), 'a'); if (typeof enc === 'function') cb = enc; if (cb) queueMicrotask(cb); return true; };
      s.end = (d, enc, cb) => { if (typeof d === 'function') { cb = d; d = undefined; } if (d !== undefined) s.write(d); setTimeout(() => { s.emit('finish'); s.emit('close'); if (cb) cb(); }, 0); return s; };
      return s;
    },
  };
  // Callback and promise flavours built from the sync ones.
  const promises = {};
  for (const name of ['readFile', 'writeFile', 'appendFile', 'stat', 'lstat', 'readdir', 'mkdir', 'unlink', 'rmdir', 'rm', 'rename', 'copyFile', 'symlink', 'readlink', 'realpath', 'access', 'mkdtemp', 'chmod']) {
    const sync = fs[name + 'Sync'];
    promises[name] = (...args) => new Promise((resolve, reject) => { try { resolve(sync(...args)); } catch (e) { reject(e); } });
    fs[name] = (...args) => {
      const cb = typeof args[args.length - 1] === 'function' ? args.pop() : null;
      let r, err = null;
      try { r = sync(...args); } catch (e) { err = e; }
      if (cb) setTimeout(() => (err ? cb(err) : cb(null, r)), 0);
    };
  }
  fs.exists = (p, cb) => setTimeout(() => cb(fs.existsSync(p)), 0);
  fs.promises = promises;
  fs.Stats = Stats;
  fs.Dirent = Dirent;

  // ---- events -----------------------------------------------------------
  class EventEmitter {
    constructor() { Object.defineProperty(this, '_events', { value: new Map(), writable: true }); }
    _list(n) { if (!this._events) Object.defineProperty(this, '_events', { value: new Map() }); if (!this._events.has(n)) this._events.set(n, []); return this._events.get(n); }
    on(n, f) { this._list(n).push(f); return this; }
    addListener(n, f) { return this.on(n, f); }
    prependListener(n, f) { this._list(n).unshift(f); return this; }
    once(n, f) { const w = (...a) => { this.off(n, w); f.apply(this, a); }; w.listener = f; return this.on(n, w); }
    off(n, f) { const l = this._list(n); const i = l.findIndex((x) => x === f || x.listener === f); if (i >= 0) l.splice(i, 1); return this; }
    removeListener(n, f) { return this.off(n, f); }
    removeAllListeners(n) { if (n === undefined) this._events.clear(); else this._events.delete(n); return this; }
    emit(n, ...a) {
      const l = this._events && this._events.get(n);
      if (!l || l.length === 0) { if (n === 'error') throw a[0]; return false; }
      for (const f of [...l]) f.apply(this, a);
      return true;
    }
    listeners(n) { return [...this._list(n)].map((f) => f.listener || f); }
    listenerCount(n) { return this._events && this._events.has(n) ? this._events.get(n).length : 0; }
    eventNames() { return [...this._events.keys()].filter((k) => this._events.get(k).length); }
    setMaxListeners() { return this; }
    getMaxListeners() { return 10; }
  }
  EventEmitter.EventEmitter = EventEmitter;
  EventEmitter.defaultMaxListeners = 10;
  EventEmitter.once = (em, n) => new Promise((res) => em.once(n, (...a) => res(a)));

  // ---- timers -----------------------------------------------------------
  let timerSeq = 0;
  const timers = new Map(); // id -> {id, at, fn, args, repeat}
  const immediates = [];
  class Timeout {
    constructor(id) { this._id = id; }
    ref() { return this; } unref() { const t = timers.get(this._id); if (t) t.unref = true; return this; }
    hasRef() { return true; } refresh() { const t = timers.get(this._id); if (t) t.at = native.hrtime() + t.ms; return this; }
    [Symbol.toPrimitive]() { return this._id; }
  }
  function addTimer(fn, ms, args, repeat) {
    if (typeof fn !== 'function') { const e = new TypeError(`The "callback" argument must be of type function. Received ${describeReceived(fn)}`); e.code = 'ERR_INVALID_ARG_TYPE'; throw e; }
    ms = Number(ms);
    if (!(ms >= 1 && ms <= 2147483647)) ms = 1;
    const id = ++timerSeq;
    timers.set(id, { id, at: native.hrtime() + ms, ms, fn, args, repeat, seq: id });
    return new Timeout(id);
  }
  function clearTimer(t) {
    if (t == null) return;
    timers.delete(typeof t === 'object' ? t._id : Number(t));
  }
  G.setTimeout = (fn, ms, ...args) => addTimer(fn, ms, args, false);
  G.setInterval = (fn, ms, ...args) => addTimer(fn, ms, args, true);
  G.clearTimeout = clearTimer;
  G.clearInterval = clearTimer;
  G.setImmediate = (fn, ...args) => { const im = { fn, args, live: true }; immediates.push(im); return im; };
  G.clearImmediate = (im) => { if (im) im.live = false; };
  G.queueMicrotask = (fn) => { Promise.resolve().then(fn); };
  const tickQueue = [];

  // ---- process ----------------------------------------------------------
  let exitCode;
  let exiting = false;
  class ExitSignal { constructor(code) { this.code = code; } }
  const proc = new EventEmitter();
  function doExit(code) {
    if (code === undefined) code = exitCode === undefined ? 0 : exitCode;
    code = Number(code) | 0;
    if (!exiting) {
      exiting = true;
      proc.exitCode = code;
      try { proc.emit('exit', code); } catch (e) { printError(e); code = 7; }
      if (proc.exitCode !== undefined && proc.exitCode !== code) code = Number(proc.exitCode) | 0;
    }
    native.exit(code);
  }
  function writer(fd) {
    const s = new EventEmitter();
    s.fd = fd;
    s.isTTY = false;
    s.columns = 80;
    s.writable = true;
    s.write = (chunk, enc, cb) => {
      if (typeof enc === 'function') { cb = enc; enc = undefined; }
      native.write(fd, toBytes(typeof chunk === 'string' || ArrayBuffer.isView(chunk) ? chunk : String(chunk), enc));
      if (cb) queueMicrotask(cb);
      return true;
    };
    s.end = (chunk, enc, cb) => { if (typeof chunk === 'function') cb = chunk; else if (chunk != null) s.write(chunk, enc); if (typeof cb === 'function') queueMicrotask(cb); s.emit('finish'); };
    s.cork = s.uncork = () => {};
    s.getWindowSize = () => [80, 24];
    s.hasColors = () => false;
    return s;
  }
  const stdin = new EventEmitter();
  stdin.fd = 0;
  stdin.isTTY = false;
  let stdinRead = false, stdinEnc = null;
  const readStdinOnce = () => { if (stdinRead) return null; stdinRead = true; return native.readStdin(); };
  stdin.setEncoding = (e) => { stdinEnc = e; return stdin; };
  stdin.resume = () => { scheduleStdin(); return stdin; };
  stdin.pause = () => stdin;
  stdin.read = () => null;
  stdin.unref = stdin.ref = () => stdin;
  const origOn = stdin.on.bind(stdin);
  function scheduleStdin() {
    if (stdin._scheduled) return;
    stdin._scheduled = true;
    setTimeout(() => {
      const bytes = readStdinOnce();
      if (bytes && bytes.byteLength) stdin.emit('data', stdinEnc ? new Buffer(bytes).toString(stdinEnc) : new Buffer(bytes));
      stdin.emit('end');
      stdin.emit('close');
    }, 0);
  }
  stdin.on = stdin.addListener = (n, f) => { origOn(n, f); if (n === 'data' || n === 'end' || n === 'readable') scheduleStdin(); return stdin; };
  stdin[Symbol.asyncIterator] = async function* () {
    const bytes = readStdinOnce();
    if (bytes && bytes.byteLength) yield stdinEnc ? new Buffer(bytes).toString(stdinEnc) : new Buffer(bytes);
  };
  const t0 = Date.now();
  Object.assign(proc, {
    title: 'node',
    version: 'v22.12.0',
    versions: { node: '22.12.0', boa: '0.22.0', v8: '0.0.0' },
    arch: 'wasm32',
    platform: 'linux',
    release: { name: 'node' },
    pid: 1, ppid: 0,
    execPath: '/usr/bin/node',
    execArgv: [],
    argv: [],
    argv0: 'node',
    env,
    exitCode: undefined,
    config: { variables: {} },
    features: {},
    stdout: writer(1),
    stderr: writer(2),
    stdin,
    cwd: () => cwd,
    chdir(d) {
      const a = abs(d);
      let st;
      try { st = native.stat(a, true); } catch (raw) { throw sysError(raw, 'chdir', d); }
      if (st[0] !== 'dir') throw sysError('ENOTDIR', 'chdir', d);
      try { native.chdir(a); } catch (_) { /* JS paths still resolve */ }
      cwd = a;
      env.PWD = a;
    },
    exit(code) { if (code !== undefined) proc.exitCode = code; doExit(code === undefined ? proc.exitCode : code); },
    abort() { native.exit(134); },
    nextTick(fn, ...args) { tickQueue.push([fn, args]); },
    hrtime: Object.assign((prev) => {
      const ms = native.hrtime();
      const s = Math.floor(ms / 1000), ns = Math.floor((ms % 1000) * 1e6);
      if (prev) { let ds = s - prev[0], dn = ns - prev[1]; if (dn < 0) { ds--; dn += 1e9; } return [ds, dn]; }
      return [s, ns];
    }, { bigint: () => BigInt(Math.floor(native.hrtime() * 1e6)) }),
    uptime: () => native.hrtime() / 1000,
    memoryUsage: Object.assign(() => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }), { rss: () => 0 }),
    cpuUsage: () => ({ user: 0, system: 0 }),
    umask: () => 0o22,
    getuid: () => 0, getgid: () => 0, geteuid: () => 0, getegid: () => 0,
    kill() { throw sysError('ENOSYS', 'kill'); },
    emitWarning(w) { native.write(2, `(node:1) ${typeof w === 'string' ? 'Warning: ' + w : errorHead(w)}\n`); },
    binding() { throw new Error('No such module'); },
  });
  Object.defineProperty(proc, 'exitCode', { get: () => exitCode, set: (v) => { exitCode = v; }, enumerable: true });
  proc[Symbol.toStringTag] = 'process';
  function runTicks() {
    while (tickQueue.length) { const [fn, args] = tickQueue.shift(); fn(...args); }
  }

  // ---- console ----------------------------------------------------------
  let groupIndent = '';
  const counts = new Map(), timesMap = new Map();
  const out = (fd) => (...a) => {
    let s = format(...a);
    if (groupIndent) s = groupIndent + s.split('\n').join('\n' + groupIndent);
    native.write(fd, s + '\n');
  };
  const console = {
    log: out(1), info: out(1), debug: out(1),
    error: out(2), warn: out(2), trace: (...a) => out(2)('Trace' + (a.length ? ': ' + format(...a) : '')),
    dir: (v, o) => out(1)(inspect(v, o)),
    assert: (c, ...a) => { if (!c) out(2)('Assertion failed' + (a.length ? ': ' + format(...a) : '')); },
    group: (...a) => { if (a.length) out(1)(...a); groupIndent += '  '; },
    groupEnd: () => { groupIndent = groupIndent.slice(2); },
    count: (l = 'default') => { const n = (counts.get(l) || 0) + 1; counts.set(l, n); out(1)(`${l}: ${n}`); },
    countReset: (l = 'default') => counts.delete(l),
    time: (l = 'default') => timesMap.set(l, native.hrtime()),
    timeEnd: (l = 'default') => { const t = timesMap.get(l); timesMap.delete(l); if (t !== undefined) out(1)(`${l}: ${(native.hrtime() - t).toFixed(3)}ms`); },
    timeLog: (l = 'default', ...a) => { const t = timesMap.get(l); if (t !== undefined) out(1)(`${l}: ${(native.hrtime() - t).toFixed(3)}ms`, ...a); },
    table: (d) => out(1)(inspect(d)),
  };
  console.groupCollapsed = console.group;
  console.dirxml = console.log;

  // ---- small modules ----------------------------------------------------
  const os = {
    EOL: '\n',
    platform: () => 'linux',
    type: () => 'Linux',
    release: () => '6.0.0-ephemeral',
    version: () => '#1 SMP',
    arch: () => 'wasm32',
    machine: () => 'wasm32',
    hostname: () => env.HOSTNAME || 'sandbox',
    homedir: () => env.HOME || '/root',
    tmpdir: () => (env.TMPDIR || '/tmp').replace(/(.)\/$/, '$1'),
    endianness: () => 'LE',
    cpus: () => [{ model: 'wasm', speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } }],
    availableParallelism: () => 1,
    totalmem: () => 4294967296,
    freemem: () => 2147483648,
    uptime: () => Math.floor(native.hrtime() / 1000),
    loadavg: () => [0, 0, 0],
    networkInterfaces: () => ({}),
    userInfo: () => ({ uid: 0, gid: 0, username: env.USER || 'root', homedir: env.HOME || '/root', shell: env.SHELL || '/bin/sh' }),
    constants: { signals: {}, errno: {} },
    devNull: '/dev/null',
  };
  const util = {
    inspect, format,
    formatWithOptions: (o, ...a) => format(...a),
    inherits(ctor, superCtor) { Object.setPrototypeOf(ctor.prototype, superCtor.prototype); Object.setPrototypeOf(ctor, superCtor); ctor.super_ = superCtor; },
    promisify(f) {
      return (...args) => new Promise((res, rej) => f(...args, (err, v) => (err ? rej(err) : res(v))));
    },
    callbackify: (f) => (...args) => { const cb = args.pop(); f(...args).then((v) => cb(null, v), (e) => cb(e)); },
    deprecate: (f) => f,
    isDeepStrictEqual: (a, b) => deepEqual(a, b, true),
    types: {
      isPromise: (v) => v instanceof Promise, isDate: (v) => v instanceof Date, isRegExp: (v) => v instanceof RegExp,
      isMap: (v) => v instanceof Map, isSet: (v) => v instanceof Set, isNativeError: (v) => v instanceof Error,
      isTypedArray: (v) => ArrayBuffer.isView(v) && !(v instanceof DataView), isUint8Array: (v) => v instanceof Uint8Array,
      isAsyncFunction: (f) => typeof f === 'function' && ctorName(f) === 'AsyncFunction',
    },
    isArray: Array.isArray,
    TextEncoder: undefined, TextDecoder: undefined,
    debuglog: () => () => {},
    stripVTControlCharacters: (s) => s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, ''),
  };
  util.promisify.custom = Symbol.for('nodejs.util.promisify.custom');

  function deepEqual(a, b, strict) {
    if (strict ? Object.is(a, b) : a == b || (a !== a && b !== b)) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
    if (strict && Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
    if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
    if (a instanceof Map && b instanceof Map) return a.size === b.size && [...a].every(([k, v]) => b.has(k) && deepEqual(v, b.get(k), strict));
    if (a instanceof Set && b instanceof Set) return a.size === b.size && [...a].every((v) => b.has(v));
    const ka = Object.keys(a), kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k], strict));
  }
  class AssertionError extends Error {
    constructor(o) { super(o.message); this.name = 'AssertionError'; this.code = 'ERR_ASSERTION'; this.actual = o.actual; this.expected = o.expected; this.operator = o.operator; this.generatedMessage = !o.userMessage; }
  }
  function fail(actual, expected, message, operator, def) {
    if (message instanceof Error) throw message;
    throw new AssertionError({ message: message || def, actual, expected, operator, userMessage: !!message });
  }
  const assert = (v, m) => { if (!v) fail(v, true, m, '==', 'The expression evaluated to a falsy value:\n\n  assert(' + inspect(v) + ')\n'); };
  Object.assign(assert, {
    ok: (v, m) => assert(v, m),
    equal: (a, b, m) => { if (!(a == b || (a !== a && b !== b))) fail(a, b, m, '==', `${inspect(a)} == ${inspect(b)}`); },
    notEqual: (a, b, m) => { if (a == b) fail(a, b, m, '!=', `${inspect(a)} != ${inspect(b)}`); },
    strictEqual: (a, b, m) => { if (!Object.is(a, b)) fail(a, b, m, 'strictEqual', `Expected values to be strictly equal:\n\n${inspect(a)} !== ${inspect(b)}\n`); },
    notStrictEqual: (a, b, m) => { if (Object.is(a, b)) fail(a, b, m, 'notStrictEqual', `Expected "actual" to be strictly unequal to: ${inspect(b)}`); },
    deepEqual: (a, b, m) => { if (!deepEqual(a, b, false)) fail(a, b, m, 'deepEqual', `Expected values to be loosely deep-equal:\n\n${inspect(a)}\n\nshould loosely deep-equal\n\n${inspect(b)}`); },
    deepStrictEqual: (a, b, m) => { if (!deepEqual(a, b, true)) fail(a, b, m, 'deepStrictEqual', `Expected values to be strictly deep-equal:\n${inspect(a)}\n\nshould equal\n\n${inspect(b)}`); },
    notDeepStrictEqual: (a, b, m) => { if (deepEqual(a, b, true)) fail(a, b, m, 'notDeepStrictEqual', 'Expected "actual" not to be strictly deep-equal to: ' + inspect(b)); },
    throws(f, exp, m) {
      try { f(); } catch (e) {
        if (typeof exp === 'function' && exp.prototype !== undefined && !(e instanceof exp)) throw e;
        if (exp instanceof RegExp && !exp.test(String(e))) fail(e, exp, m, 'throws', 'The error message does not match');
        return;
      }
      fail(undefined, exp, typeof exp === 'string' ? exp : m, 'throws', 'Missing expected exception.');
    },
    doesNotThrow(f) { f(); },
    async rejects(p, exp, m) { try { await (typeof p === 'function' ? p() : p); } catch (e) { return; } fail(undefined, exp, m, 'rejects', 'Missing expected rejection.'); },
    match: (s, re, m) => { if (!re.test(s)) fail(s, re, m, 'match', `The input did not match the regular expression ${re}. Input:\n\n${inspect(s)}\n`); },
    fail: (m) => fail(undefined, undefined, m || 'Failed', 'fail'),
    AssertionError,
  });
  assert.strict = assert;

  // ---- the network is not there -----------------------------------------
  function netError(host) {
    const e = new Error(`getaddrinfo EAI_AGAIN ${host}`);
    e.errno = -3001; e.code = 'EAI_AGAIN'; e.syscall = 'getaddrinfo'; e.hostname = host;
    return e;
  }
  function hostOf(a) {
    try {
      if (typeof a === 'string') return new URL(a).hostname;
      if (a instanceof URL) return a.hostname;
      if (a && typeof a === 'object') return a.hostname || a.host || 'localhost';
    } catch (_) { /* fall through */ }
    return 'localhost';
  }
  function failingRequest(host) {
    const req = new EventEmitter();
    req.write = () => true; req.end = () => req; req.setHeader = () => {}; req.setTimeout = () => req; req.abort = req.destroy = () => {};
    req.on('error', () => {}); // replaced below if the caller listens
    req._events.get('error').length = 0;
    setTimeout(() => req.emit('error', netError(host)), 0);
    return req;
  }
  function httpModule() {
    const request = (a, b, cb) => failingRequest(hostOf(a));
    return {
      request, get: (a, b, cb) => { const r = request(a, b, cb); r.end(); return r; },
      createServer() {
        const srv = new EventEmitter();
        srv.listen = (...a) => { setTimeout(() => srv.emit('error', sysError('EACCES', 'listen')), 0); return srv; };
        srv.close = (cb) => { if (cb) setTimeout(cb, 0); return srv; };
        return srv;
      },
      Agent: class Agent {}, globalAgent: {},
      STATUS_CODES: { 200: 'OK', 404: 'Not Found', 500: 'Internal Server Error' },
      METHODS: ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'],
    };
  }
  const net = {
    connect(a, b) { const host = typeof a === 'object' ? a.host || 'localhost' : typeof b === 'string' ? b : 'localhost'; return failingRequest(host); },
    createServer: () => httpModule().createServer(),
    isIP: (s) => (/^\d+\.\d+\.\d+\.\d+$/.test(s) ? 4 : s.includes(':') ? 6 : 0),
  };
  net.createConnection = net.connect;
  const dns = {
    lookup: (h, o, cb) => { cb = typeof o === 'function' ? o : cb; setTimeout(() => cb(netError(h)), 0); },
    promises: { lookup: (h) => Promise.reject(netError(h)) },
  };
  G.fetch = (input) => {
    const host = hostOf(typeof input === 'object' && input.url ? input.url : input);
    const e = new TypeError('fetch failed');
    e.cause = netError(host);
    return Promise.reject(e);
  };

  // ---- crypto (random only) ---------------------------------------------
  const crypto = {
    randomBytes: (n) => new Buffer(native.randomBytes(n)),
    randomUUID() {
      const b = new Uint8Array(native.randomBytes(16));
      b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
      const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    },
    randomInt(a, b) { if (b === undefined) { b = a; a = 0; } return a + Math.floor(Math.random() * (b - a)); },
    getRandomValues(arr) { const b = new Uint8Array(native.randomBytes(arr.byteLength)); new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength).set(b); return arr; },
    createHash() { throw new Error('crypto.createHash is not available in this sandbox'); },
  };
  crypto.webcrypto = { getRandomValues: crypto.getRandomValues, randomUUID: crypto.randomUUID };
  G.crypto = crypto.webcrypto;

  // ---- TextEncoder / TextDecoder / URL ----------------------------------
  class TextEncoder {
    get encoding() { return 'utf-8'; }
    encode(s = '') { return new Uint8Array(native.utf8Encode(String(s))); }
  }
  class TextDecoder {
    constructor(enc = 'utf-8') { this.encoding = enc; }
    decode(b) { return b === undefined ? '' : native.utf8Decode(b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength)); }
  }
  util.TextEncoder = TextEncoder;
  util.TextDecoder = TextDecoder;
  class URLSearchParams {
    constructor(init) {
      this._list = [];
      if (typeof init === 'string') {
        for (const part of init.replace(/^\?/, '').split('&')) {
          if (!part) continue;
          const i = part.indexOf('=');
          const dec = (s) => decodeURIComponent(s.replace(/\+/g, ' '));
          this._list.push(i < 0 ? [dec(part), ''] : [dec(part.slice(0, i)), dec(part.slice(i + 1))]);
        }
      } else if (init && typeof init === 'object') {
        for (const [k, v] of Array.isArray(init) ? init : Object.entries(init)) this._list.push([String(k), String(v)]);
      }
    }
    get(k) { const e = this._list.find((x) => x[0] === k); return e ? e[1] : null; }
    getAll(k) { return this._list.filter((x) => x[0] === k).map((x) => x[1]); }
    has(k) { return this._list.some((x) => x[0] === k); }
    set(k, v) { this.delete(k); this._list.push([k, String(v)]); }
    append(k, v) { this._list.push([k, String(v)]); }
    delete(k) { this._list = this._list.filter((x) => x[0] !== k); }
    forEach(f) { for (const [k, v] of this._list) f(v, k, this); }
    keys() { return this._list.map((x) => x[0])[Symbol.iterator](); }
    values() { return this._list.map((x) => x[1])[Symbol.iterator](); }
    entries() { return this._list.map((x) => [...x])[Symbol.iterator](); }
    [Symbol.iterator]() { return this.entries(); }
    toString() { const e = (s) => encodeURIComponent(s).replace(/%20/g, '+'); return this._list.map(([k, v]) => `${e(k)}=${e(v)}`).join('&'); }
  }
  class URL {
    constructor(u, base) {
      u = String(u);
      const m = /^([a-zA-Z][a-zA-Z0-9+.-]*:)(?:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^:/?#]*)(?::(\d+))?)?([^?#]*)(\?[^#]*)?(#.*)?$/.exec(u);
      if (!m) {
        if (base !== undefined) {
          const b = new URL(base);
          let p = u;
          if (!u.startsWith('/')) p = b.pathname.replace(/[^/]*$/, '') + u;
          return new URL(b.protocol + '//' + b.host + p);
        }
        const e = new TypeError('Invalid URL');
        e.code = 'ERR_INVALID_URL'; e.input = u;
        throw e;
      }
      this.protocol = m[1].toLowerCase();
      this.username = m[2] || ''; this.password = m[3] || '';
      this.hostname = (m[4] || '').toLowerCase();
      this.port = m[5] && !({ 'http:': '80', 'https:': '443' })[this.protocol]?.includes(m[5]) ? m[5] : '';
      this.pathname = m[6] || (this.hostname ? '/' : '');
      this.search = m[7] && m[7] !== '?' ? m[7] : '';
      this.hash = m[8] && m[8] !== '#' ? m[8] : '';
      this.searchParams = new URLSearchParams(this.search);
    }
    get host() { return this.hostname + (this.port ? ':' + this.port : ''); }
    get origin() { return this.protocol + '//' + this.host; }
    get href() { return this.protocol + (this.hostname || this.protocol === 'file:' ? '//' : '') + (this.username ? this.username + (this.password ? ':' + this.password : '') + '@' : '') + this.host + this.pathname + this.search + this.hash; }
    toString() { return this.href; }
    toJSON() { return this.href; }
  }
  const url = {
    URL, URLSearchParams,
    fileURLToPath: (u) => decodeURIComponent((typeof u === 'string' ? new URL(u) : u).pathname),
    pathToFileURL: (p) => new URL('file://' + path.resolve(p)),
    parse: (s) => { const u = new URL(s); return { protocol: u.protocol, host: u.host, hostname: u.hostname, port: u.port || null, pathname: u.pathname, search: u.search || null, hash: u.hash || null, href: u.href, path: u.pathname + u.search }; },
  };

  // ---- child_process: the sandbox's programs, run by the host -----------
  // Each child is its own process of the sandbox (the shell and its
  // utilities, python3, node…), run to its end by `native.run`; the
  // asynchronous forms run it at the next turn of the event loop and then
  // emit what Node emits, in Node's order.
  function spawnError(file, args, code, syscall) {
    const [errno] = errnoText[code] || [-5];
    const e = new Error(`${syscall} ${file} ${code}`);
    e.errno = errno; e.code = code; e.syscall = `${syscall} ${file}`; e.path = file; e.spawnargs = args;
    return e;
  }
  function findExecutable(file, env) {
    const exists = (p) => { try { return native.stat(p, true)[0] !== 'dir'; } catch (_) { return false; } };
    if (file.includes('/')) return exists(path.resolve(cwd, file));
    return ((env && env.PATH) || '/usr/local/bin:/usr/bin:/bin').split(':').some((d) => d && exists(d + '/' + file));
  }
  function stdioOf(o, dflt) {
    let s = o.stdio === undefined ? dflt : o.stdio;
    if (typeof s === 'string') s = [s, s, s];
    return [0, 1, 2].map((i) => { const v = s[i]; if (v === 'inherit' || v === i || (v === proc.stdout && i === 1) || (v === proc.stderr && i === 2)) return 'inherit'; if (v === 'ignore' || v === null && false) return 'ignore'; return 'pipe'; });
  }
  function runChild(file, args, o, dflt, syscall) {
    o = o || {};
    const childEnv = o.env || env;
    let argv = [file, ...args.map(String)];
    if (o.shell) {
      const sh = typeof o.shell === 'string' ? o.shell : '/bin/sh';
      argv = [sh, '-c', [file, ...args].join(' ')];
    } else if (!findExecutable(file, childEnv)) {
      return { error: spawnError(file, args, 'ENOENT', syscall), status: null, signal: null, stdout: null, stderr: null, pid: 0 };
    }
    const stdio = stdioOf(o, dflt);
    const flat = [];
    for (const k of Object.keys(childEnv)) if (childEnv[k] !== undefined) flat.push(k, String(childEnv[k]));
    const input = o.input === undefined ? '' : (typeof o.input === 'string' ? o.input : new Buffer(o.input));
    const dir = o.cwd ? path.resolve(cwd, String(o.cwd)) : cwd;
    let r;
    try {
      r = native.run(argv, flat, dir, toBytes(input, o.encoding && o.encoding !== 'buffer' ? o.encoding : undefined), stdio[1], stdio[2], false, o.timeout || 0);
    } catch (msg) {
      return { error: spawnError(file, args, 'EAGAIN', syscall), status: null, signal: null, stdout: null, stderr: null, pid: 0 };
    }
    const enc = o.encoding && o.encoding !== 'buffer' ? o.encoding : null;
    const conv = (ab, mode) => (mode !== 'pipe' ? null : (enc ? new Buffer(new Uint8Array(ab)).toString(enc) : new Buffer(new Uint8Array(ab))));
    const res = { pid: 0, status: r.status, signal: null, stdout: conv(r.stdout, stdio[1]), stderr: conv(r.stderr, stdio[2]) };
    res.output = [null, res.stdout, res.stderr];
    if (o.timeout && r.status === 124 && r.limit === null) {
      res.status = null; res.signal = o.killSignal || 'SIGTERM';
      res.error = spawnError(argv[0], argv.slice(1), 'ETIMEDOUT', syscall);
    } else if (r.status > 128 && r.status < 160) {
      const names = { 129: 'SIGHUP', 130: 'SIGINT', 131: 'SIGQUIT', 134: 'SIGABRT', 137: 'SIGKILL', 143: 'SIGTERM' };
      if (names[r.status]) { res.signal = names[r.status]; res.status = null; }
    }
    return res;
  }
  function splitArgs(args, o) { if (!Array.isArray(args)) return [[], args]; return [args, o]; }
  function checkFailure(res, command) {
    if (res.error) throw res.error;
    if (res.status !== 0) {
      const stderrText = res.stderr ? String(res.stderr) : '';
      const e = new Error(`Command failed: ${command}${stderrText ? '\n' + stderrText : ''}`);
      Object.assign(e, { status: res.status, signal: res.signal, output: res.output, pid: 0, stdout: res.stdout, stderr: res.stderr });
      throw e;
    }
    return res.stdout;
  }
  class ChildProcess extends EventEmitter {
    constructor() { super(); this.pid = 0; this.stdout = new EventEmitter(); this.stderr = new EventEmitter(); this.stdin = new EventEmitter(); this.stdin.write = () => true; this.stdin.end = () => {}; this.exitCode = null; this.signalCode = null; this.killed = false; }
    kill() { this.killed = true; return false; }
  }
  function startAsync(file, args, o, dflt, done) {
    const child = new ChildProcess();
    G.setImmediate(() => {
      const res = runChild(file, args, o, dflt, 'spawn');
      if (res.error) { child.emit('error', res.error); if (done) done(res.error, '', ''); return; }
      for (const [s, d] of [[child.stdout, res.stdout], [child.stderr, res.stderr]]) { if (d && d.length) s.emit('data', d); s.emit('end'); }
      child.exitCode = res.status; child.signalCode = res.signal;
      if (done) {
        let err = null;
        if (res.status !== 0) { err = new Error(`Command failed: ${o && o.__command || [file, ...args].join(' ')}\n${res.stderr || ''}`); err.code = res.status; err.killed = false; err.signal = res.signal; err.cmd = o && o.__command || [file, ...args].join(' '); }
        done(err, res.stdout === null ? '' : res.stdout, res.stderr === null ? '' : res.stderr);
      }
      child.emit('exit', res.status, res.signal);
      child.emit('close', res.status, res.signal);
    });
    return child;
  }
  const childProcess = {
    ChildProcess,
    spawnSync(file, args, o) { [args, o] = splitArgs(args, o); return runChild(file, args, o, 'pipe', 'spawnSync'); },
    execSync(command, o) {
      o = Object.assign({}, o, { shell: (o && o.shell) || '/bin/sh' });
      return checkFailure(runChild(command, [], o, ['pipe', 'pipe', 'inherit'], 'spawnSync'), command);
    },
    execFileSync(file, args, o) {
      [args, o] = splitArgs(args, o);
      return checkFailure(runChild(file, args, o, ['pipe', 'pipe', 'inherit'], 'spawnSync'), [file, ...args].join(' '));
    },
    spawn(file, args, o) { [args, o] = splitArgs(args, o); return startAsync(file, args || [], o, 'pipe', null); },
    exec(command, o, cb) {
      if (typeof o === 'function') { cb = o; o = {}; }
      o = Object.assign({ encoding: 'utf8' }, o, { shell: (o && o.shell) || '/bin/sh', __command: command });
      return startAsync(command, [], o, 'pipe', cb);
    },
    execFile(file, args, o, cb) {
      if (typeof args === 'function') { cb = args; args = []; o = {}; } else if (typeof o === 'function') { cb = o; o = {}; }
      if (!Array.isArray(args)) { o = args; args = []; }
      return startAsync(file, args, Object.assign({ encoding: 'utf8' }, o), 'pipe', cb);
    },
    fork() { throw sysError('ENOSYS', 'fork'); },
  };
  class Stream extends EventEmitter { pipe(d) { this.on('data', (c) => d.write(c)); this.on('end', () => d.end && d !== proc.stdout && d !== proc.stderr && d.end()); return d; } }
  const stream = { Stream, Readable: class Readable extends Stream {}, Writable: class Writable extends Stream {}, Transform: class Transform extends Stream {}, PassThrough: class PassThrough extends Stream {} };
  const readline = {
    createInterface({ input }) {
      const rl = new EventEmitter();
      rl.close = () => { if (!rl.closed) { rl.closed = true; rl.emit('close'); } };
      rl.question = (q, cb) => { native.write(1, q); rl.once('line', cb); };
      rl.setPrompt = () => {}; rl.prompt = () => {};
      let lines = null;
      const getLines = () => {
        if (lines) return lines;
        const bytes = input === stdin ? readStdinOnce() : null;
        const text = bytes ? native.utf8Decode(bytes) : '';
        lines = text.split(/\r?\n/);
        if (lines[lines.length - 1] === '') lines.pop();
        return lines;
      };
      setTimeout(() => {
        for (const l of getLines()) { if (rl.closed) break; rl.emit('line', l); }
        rl.close();
      }, 0);
      rl[Symbol.asyncIterator] = async function* () { for (const l of getLines()) yield l; };
      return rl;
    },
  };

  // ---- require ----------------------------------------------------------
  const builtins = {
    fs, path, os, util, events: EventEmitter, assert, url, crypto, buffer: { Buffer },
    http: null, https: null, net, dns, child_process: childProcess, stream, readline,
    'fs/promises': promises, 'path/posix': path, 'assert/strict': assert, 'util/types': util.types,
    timers: { setTimeout: G.setTimeout, setInterval: G.setInterval, clearTimeout, clearInterval: clearTimer, setImmediate: G.setImmediate, clearImmediate: G.clearImmediate },
    'timers/promises': { setTimeout: (ms, v) => new Promise((r) => G.setTimeout(() => r(v), ms)), setImmediate: (v) => new Promise((r) => G.setImmediate(() => r(v))) },
    process: proc, console, string_decoder: { StringDecoder: class StringDecoder { constructor(e) { this.e = e; } write(b) { return new Buffer(b).toString(this.e); } end(b) { return b ? this.write(b) : ''; } } },
    tty: { isatty: () => false }, worker_threads: { isMainThread: true }, module: {}, v8: {}, vm: {}, zlib: {}, perf_hooks: { performance: null },
  };
  function builtin(name) {
    const n = name.startsWith('node:') ? name.slice(5) : name;
    if (!Object.prototype.hasOwnProperty.call(builtins, n)) return undefined;
    if (builtins[n] === null) builtins[n] = httpModule();
    return builtins[n];
  }
  const moduleCache = {};
  function makeRequire(dir) {
    const req = (id) => {
      checkString(id, 'id');
      const b = builtin(id);
      if (b !== undefined) return b;
      const file = resolveModule(id, dir);
      if (moduleCache[file]) return moduleCache[file].exports;
      return loadModule(file).exports;
    };
    req.resolve = (id) => (builtin(id) !== undefined ? id : resolveModule(id, dir));
    req.cache = moduleCache;
    req.main = mainModule;
    return req;
  }
  function isFile(p) { try { return native.stat(p, true)[0] === 'file'; } catch (_) { return false; } }
  function isDir(p) { try { return native.stat(p, true)[0] === 'dir'; } catch (_) { return false; } }
  function resolveFile(p) {
    for (const c of [p, p + '.js', p + '.json', p + '.cjs']) if (isFile(c)) return c;
    if (isDir(p)) {
      try {
        const pkg = JSON.parse(native.utf8Decode(native.readFile(p + '/package.json')));
        if (pkg.main) { const r = resolveFile(path.resolve(p, pkg.main)); if (r) return r; }
      } catch (_) { /* no package.json */ }
      for (const c of ['/index.js', '/index.json']) if (isFile(p + c)) return p + c;
    }
    return null;
  }
  function resolveModule(id, dir) {
    let r = null;
    if (id.startsWith('./') || id.startsWith('../') || id.startsWith('/') || id === '.' || id === '..') r = resolveFile(path.resolve(dir, id));
    else {
      for (let d = dir; ; d = path.dirname(d)) {
        r = resolveFile(path.join(d, 'node_modules', id));
        if (r || d === '/') break;
      }
    }
    if (!r) {
      const e = new Error(`Cannot find module '${id}'\nRequire stack:\n- ${currentFile}`);
      e.code = 'MODULE_NOT_FOUND';
      e.requireStack = [currentFile];
      throw e;
    }
    return r;
  }
  let currentFile = '[eval]';
  let mainModule;
  function Module(id, filename) {
    this.id = id; this.path = path.dirname(filename); this.exports = {}; this.filename = filename; this.loaded = false; this.children = []; this.paths = [];
  }
  function stripShebang(src) { return src.startsWith('#!') ? '//' + src.slice(2) : src; }
  // ES module syntax, the common cases, rewritten line for line to
  // CommonJS (Boa runs the result as a script; top-level await is allowed
  // by running the body as an async function).
  const esmRe = /(^|;)[ \t]*(import\s*[\w{*'"]|export\s+(default\b|const\b|let\b|var\b|function\b|async\b|class\b|\{))/m;
  function looksLikeEsm(src, file) { return /\.mjs$/.test(file) || (!/\.cjs$/.test(file) && esmRe.test(src)); }
  function esmToCjs(src) {
    const names = [];
    const spec = (m) => `require(${m})`;
    const braces = (b) => '{' + b.replace(/([\w$]+)\s+as\s+([\w$]+)/g, '$1: $2') + '}';
    src = src
      .replace(/(^[ \t]*|;[ \t]*)import\s+([\w$]+)\s*,\s*\{([^}]*)\}\s*from\s*(['"][^'"]+['"])/gm, (_, i, d, b, m) => `${i}const ${d} = __esmDefault(${spec(m)}), ${braces(b)} = ${spec(m)}`)
      .replace(/(^[ \t]*|;[ \t]*)import\s+([\w$]+)\s*,\s*\*\s*as\s+([\w$]+)\s*from\s*(['"][^'"]+['"])/gm, (_, i, d, n, m) => `${i}const ${d} = __esmDefault(${spec(m)}), ${n} = ${spec(m)}`)
      .replace(/(^[ \t]*|;[ \t]*)import\s*\{([^}]*)\}\s*from\s*(['"][^'"]+['"])/gm, (_, i, b, m) => `${i}const ${braces(b)} = ${spec(m)}`)
      .replace(/(^[ \t]*|;[ \t]*)import\s*\*\s*as\s+([\w$]+)\s*from\s*(['"][^'"]+['"])/gm, (_, i, n, m) => `${i}const ${n} = ${spec(m)}`)
      .replace(/(^[ \t]*|;[ \t]*)import\s+([\w$]+)\s+from\s*(['"][^'"]+['"])/gm, (_, i, d, m) => `${i}const ${d} = __esmDefault(${spec(m)})`)
      .replace(/(^[ \t]*|;[ \t]*)import\s*(['"][^'"]+['"])/gm, (_, i, m) => `${i}${spec(m)}`)
      .replace(/(^[ \t]*|;[ \t]*)export\s+default\s+/gm, '$1module.exports.default = ')
      .replace(/(^[ \t]*|;[ \t]*)export\s+(?:async\s+)?(?:const|let|var|function\*?|class)\s+([\w$]+)/gm, (all, i, n) => { names.push(n); return all.replace(/export\s+/, ''); })
      .replace(/(^[ \t]*|;[ \t]*)export\s*\{([^}]*)\}\s*;?/gm, (_, i, b) => { for (const part of b.split(',')) { const m = part.trim().split(/\s+as\s+/); if (m[0]) names.push(m[1] ? [m[0], m[1]] : m[0]); } return i; })
      .replace(/\bimport\.meta\.url\b/g, "require('url').pathToFileURL(__filename).href")
      .replace(/\bimport\.meta\.filename\b/g, '__filename')
      .replace(/\bimport\.meta\.dirname\b/g, '__dirname')
      .replace(/\bimport\(/g, '__esmImport(');
    const tail = names.map((n) => (Array.isArray(n) ? `module.exports[${JSON.stringify(n[1])}] = ${n[0]};` : `module.exports.${n} = ${n};`)).join(' ');
    return `Object.defineProperty(module.exports, '__esModule', { value: true }); return (async () => {${src}\n${tail}})();`;
  }
  G.__esmDefault = (m) => (m && m.__esModule ? m.default : m);
  G.__esmImport = (id) => { try { const m = (G.require || makeRequire(cwd))(id); return Promise.resolve(m && typeof m === 'object' && 'default' in m ? m : Object.assign(Object.create(null), m, { default: m })); } catch (e) { return Promise.reject(e); } };
  function runModule(mod, src) {
    const prev = currentFile;
    currentFile = mod.filename;
    try {
      const body = stripShebang(src);
      const wrap = (b) => native.compile('(function (exports, require, module, __filename, __dirname) {' + b + '\n})', mod.filename);
      let wrapper;
      if (looksLikeEsm(body, mod.filename)) wrapper = wrap(esmToCjs(body));
      else {
        try { wrapper = wrap(body); } catch (e) {
          // Like Node's module detection: what only parses as a module is one.
          if (!(e instanceof SyntaxError) || !/\b(import|export|await)\b/.test(body)) throw e;
          wrapper = wrap(esmToCjs(body));
        }
      }
      mod.require = makeRequire(mod.path);
      wrapper.call(mod.exports, mod.exports, mod.require, mod, mod.filename, mod.path);
      mod.loaded = true;
    } finally { currentFile = prev; }
    return mod;
  }
  function loadModule(file) {
    const mod = new Module(file, file);
    moduleCache[file] = mod;
    const src = native.utf8Decode(native.readFile(file));
    try {
      if (file.endsWith('.json')) { mod.exports = JSON.parse(src); mod.loaded = true; return mod; }
      return runModule(mod, src);
    } catch (e) { delete moduleCache[file]; throw e; }
  }

  // ---- globals ----------------------------------------------------------
  Object.assign(G, {
    console, process: proc, Buffer, global: G, TextEncoder, TextDecoder, URL, URLSearchParams, atob, btoa,
    structuredClone: (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v))),
    performance: { now: () => native.hrtime(), timeOrigin: t0 },
  });
  builtins.perf_hooks.performance = G.performance;
  for (const k of ['console', 'process', 'Buffer', 'global']) {
    Object.defineProperty(G, k, { enumerable: false });
  }

  // ---- errors at the top ------------------------------------------------
  function printError(e) {
    let s;
    if (e instanceof Error) {
      s = fmtError(e);
      const extra = Object.keys(e).filter((k) => k !== 'stack' && k !== 'message');
      if (extra.length) {
        const o = {};
        for (const k of extra) o[k] = e[k];
        s += ' ' + inspect(o);
      }
    } else {
      s = (typeof e === 'string' ? e : inspect(e)) + '\n(Use `node --trace-uncaught ...` to show where the exception was thrown)';
    }
    native.write(2, (currentFile !== '[eval]' && !(e instanceof Error) ? '' : '') + s + '\n\nNode.js ' + proc.version + '\n');
  }
  function fatalError(e) {
    if (e instanceof ExitSignal) return native.exit(e.code);
    if (proc.listenerCount('uncaughtException') > 0) {
      proc.emit('uncaughtException', e, 'uncaughtException');
      return;
    }
    printError(e);
    exiting = true;
    try { proc.emit('exit', 1); } catch (_) { /* ignore */ }
    native.exit(7 === 0 ? 0 : 1);
  }

  // ---- the entry point --------------------------------------------------
  const args = rawArgv.slice(1);
  let evalCode = null, printResult = false, script = null, checkOnly = false;
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (a === '-e' || a === '--eval' || a === '-p' || a === '--print') {
      if (i + 1 >= args.length) { native.write(2, `node: ${a} requires an argument\n`); native.exit(9); }
      evalCode = args[++i];
      if (a === '-p' || a === '--print') printResult = true;
      i++;
      break;
    } else if (a === '-pe') { printResult = true; evalCode = args[++i]; i++; break; }
    else if (a === '-v' || a === '--version') { native.write(1, proc.version + '\n'); native.exit(0); }
    else if (a === '-h' || a === '--help') { native.write(1, 'Usage: node [options] [ script.js | -e "script" | - ] [arguments]\n'); native.exit(0); }
    else if (a === '-c' || a === '--check') checkOnly = true;
    else if (a === '-') { i++; break; }
    else if (a === '--') { i++; if (i < args.length) { script = args[i]; i++; } break; }
    else if (a.startsWith('-')) { /* ignore other flags (e.g. --no-warnings) */ }
    else { script = a; i++; break; }
  }
  const rest = args.slice(i);

  const rt = {
    main() {
      let code, filename;
      if (evalCode !== null) {
        code = evalCode; filename = '[eval]';
        proc.argv = ['/usr/bin/node', ...rest];
      } else if (script !== null) {
        filename = path.resolve(script);
        proc.argv = ['/usr/bin/node', filename, ...rest];
        try { code = native.utf8Decode(native.readFile(filename)); } catch (raw) {
          if (raw !== 'ENOENT' && raw !== 'EISDIR') throw sysError(raw, 'open', filename);
          const alt = resolveFile(filename);
          if (!alt) {
            native.write(2, `node:internal/modules/cjs/loader\n  throw err;\n  ^\n\nError: Cannot find module '${filename}'\n    at Module._resolveFilename (node:internal/modules/cjs/loader)\n    at node:internal/main/run_main_module {\n  code: 'MODULE_NOT_FOUND',\n  requireStack: []\n}\n\nNode.js ${proc.version}\n`);
            native.exit(1);
          }
          filename = alt;
          proc.argv[1] = alt;
          code = native.utf8Decode(native.readFile(alt));
        }
      } else {
        code = native.utf8Decode(native.readStdin()); filename = '[stdin]';
        stdinRead = true;
        proc.argv = ['/usr/bin/node', ...rest];
      }
      if (checkOnly) { native.compile('(function(){' + stripShebang(code) + '\n})', filename); return; }
      if (filename.startsWith('/')) {
        mainModule = new Module('.', filename);
        moduleCache[filename] = mainModule;
        runModule(mainModule, code);
      } else {
        // -e, -p and stdin run as scripts with require/module in scope.
        mainModule = new Module(filename, path.join(cwd, filename));
        mainModule.path = cwd;
        G.require = makeRequire(cwd);
        G.module = mainModule;
        G.exports = mainModule.exports;
        G.__filename = filename;
        G.__dirname = '.';
        currentFile = filename;
        if (!printResult && /\b(import|export|await)\b/.test(code)) {
          let esm = esmRe.test(code);
          if (!esm) {
            try { native.compile('(function () {' + code + '\n})', filename); } catch (e) { esm = e instanceof SyntaxError; }
          }
          if (esm) code = '(function () {' + esmToCjs(code) + '\n})()';
        }
        const result = native.compile(code, filename);
        if (printResult) {
          native.write(1, (typeof result === 'string' ? result : inspect(result)) + '\n');
        }
      }
    },
    runTicks,
    afterMicrotasks() {
      if (tickQueue.length) return true;
      const list = native.takeUnhandled();
      let more = false;
      for (let j = 0; j < list.length; j += 2) {
        const reason = list[j + 1];
        if (proc.listenerCount('unhandledRejection') > 0) { proc.emit('unhandledRejection', reason, list[j]); more = true; continue; }
        if (reason instanceof Error) throw reason;
        const e = new Error('This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason "' + inspect(reason) + '".');
        e.code = 'ERR_UNHANDLED_REJECTION';
        throw e;
      }
      return more;
    },
    next() {
      if (immediates.length) return 0;
      let best = null;
      for (const t of timers.values()) if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
      if (!best) return -1;
      if ([...timers.values()].every((t) => t.unref)) return -1;
      return Math.max(0, best.at - native.hrtime());
    },
    runOne() {
      if (immediates.length) {
        const im = immediates.shift();
        if (im.live) im.fn(...im.args);
        return;
      }
      let best = null;
      for (const t of timers.values()) if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
      if (!best) return;
      if (best.repeat) { best.at = Math.max(best.at + best.ms, native.hrtime()); best.seq = ++timerSeq; } else timers.delete(best.id);
      best.fn.apply(undefined, best.args);
    },
    beforeExit() {
      if (proc.listenerCount('beforeExit') === 0) return false;
      proc.emit('beforeExit', exitCode === undefined ? 0 : exitCode);
      return timers.size > 0 || immediates.length > 0;
    },
    exitCode() {
      exiting = true;
      const code = exitCode === undefined ? 0 : Number(exitCode) | 0;
      proc.emit('exit', code);
      return exitCode === undefined ? code : Number(exitCode) | 0;
    },
    fatal: fatalError,
  };
  return rt;
})
