//! `GET /docs`: one self-contained HTML page (no CDN, no external script) that reads
//! `/openapi.json` and renders every operation with a try-it form.
//!
//! Why not Swagger UI: it would pull megabytes of assets from a CDN (unusable offline or under
//! a strict CSP) or bloat every generated binary.

pub const DOCS_HTML: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Apizr REST API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#222}
h1{font-size:1.5rem} .op{border:1px solid #ccc;border-radius:6px;margin:1rem 0;padding:1rem}
.method{font-weight:bold;color:#fff;background:#2a7;border-radius:4px;padding:.1rem .4rem;margin-right:.5rem}
.get{background:#27a} pre{background:#f6f6f6;padding:.5rem;overflow:auto}
textarea{width:100%;min-height:5rem;font-family:monospace} code{font-size:.9rem}
</style></head>
<body>
<h1 id="title">Apizr REST API</h1>
<p>Token (only if the server requires one): <input id="token" type="password" size="40"></p>
<div id="ops">Loading <code>/openapi.json</code>…</div>
<script>
"use strict";
function el(tag, attrs, ...kids){const e=document.createElement(tag);for(const k in attrs||{})e.setAttribute(k,attrs[k]);for(const c of kids)e.append(c);return e;}
function auth(){const t=document.getElementById("token").value;return t?{"Authorization":"Bearer "+t}:{};}
function example(schema){
  if(!schema||typeof schema!=="object")return null;
  if("const" in schema)return schema.const;
  if(schema.enum)return schema.enum[0];
  if(schema.anyOf)return example(schema.anyOf[0]);
  switch(schema.type){
    case "integer":return 0; case "number":return 0.5; case "string":return "text";
    case "boolean":return true; case "null":return null;
    case "array":return schema.prefixItems?schema.prefixItems.map(example):[];
    case "object":{const o={};for(const k of (schema.required||[]))o[k]=example((schema.properties||{})[k]);return o;}
  }
  return null;
}
async function run(path, textarea, out){
  out.textContent="…";
  try{
    const r=await fetch(path,{method:"POST",headers:Object.assign({"Content-Type":"application/json"},auth()),body:textarea.value});
    out.textContent=r.status+" "+r.statusText+"\n"+await r.text();
    out.dataset.status=String(r.status);
  }catch(e){out.textContent="request failed: "+e;}
}
async function main(){
  const ops=document.getElementById("ops");
  let doc;
  try{const r=await fetch("openapi.json",{headers:auth()});doc=await r.json();}
  catch(e){ops.textContent="cannot load openapi.json: "+e;return;}
  document.getElementById("title").textContent=doc.info.title+" ("+doc.info.version+")";
  ops.textContent="";
  for(const [path,item] of Object.entries(doc.paths)){
    for(const [method,op] of Object.entries(item)){
      const box=el("div",{"class":"op","data-path":path});
      box.append(el("h2",{},el("span",{"class":"method "+method},method.toUpperCase()),el("code",{},path)));
      if(op.description)box.append(el("p",{},op.description));
      if(method==="post"){
        const schema=op.requestBody.content["application/json"].schema;
        box.append(el("details",{},el("summary",{},"Request schema"),el("pre",{},JSON.stringify(schema,null,2))));
        const ta=el("textarea",{"aria-label":"arguments for "+path});
        ta.value=JSON.stringify(example(schema),null,2);
        const out=el("pre",{"class":"result"});
        const btn=el("button",{"type":"button"},"Try it");
        btn.addEventListener("click",()=>run(path,ta,out));
        box.append(ta,btn,out);
      }
      ops.append(box);
    }
  }
  document.body.dataset.ready="1";
  // `/docs#try-all` presses every "Try it" button (the headless-browser check uses it).
  if(location.hash==="#try-all")for(const b of document.querySelectorAll("button"))b.click();
}
main();
</script>
</body></html>
"##;
