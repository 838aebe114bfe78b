package report

// pageCSS styles both the report and the comparison. Meaning never rests
// on colour alone: spikes are shaded and labelled "spike", group lines dashed
// differently and named in a legend, verdicts are words.
const pageCSS = `
:root{--fg:#1b1f23;--dim:#57606a;--bg:#fff;--line:#d0d7de;--cs:#0b5cad;--series:#0969da;--base:#6e7781;--spike:#cf222e;--head:#f6f8fa}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1240px;padding:0 20px 40px}
header{border-bottom:2px solid var(--fg);margin-bottom:8px}
h1{font-size:24px;margin:18px 0 4px}
h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:3px}
h3{font-size:16px;margin:18px 0 6px}
.sub,.note,figcaption{color:var(--dim)}
figcaption{font-size:13px}
nav{font-size:14px;margin:8px 0}
nav a{margin-right:14px}
a{color:var(--cs)}
table{border-collapse:collapse;font-size:13.5px;margin:6px 0 12px;width:100%}
th,td{border-bottom:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
th{background:var(--head);font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.verdict{font-weight:600}
.up{color:#9a3412}.down{color:#0f5132}
.spikebox{border-left:4px solid var(--spike);padding:2px 12px;margin:10px 0;background:#fff8f8}
figure{margin:10px 0 18px}
svg{display:block;width:100%;height:auto;font-family:system-ui,sans-serif}
svg text{font-size:12px;fill:var(--dim)}
.axis{stroke:var(--line);stroke-width:1}
.series{fill:none;stroke:var(--series);stroke-width:1.6}
.baseline{fill:none;stroke:var(--base);stroke-width:1.2;stroke-dasharray:6 4}
.g0{stroke:#8250df}.g1{stroke:#1a7f37;stroke-dasharray:8 3}.g2{stroke:#bc4c00;stroke-dasharray:2 3}.g3{stroke:#0550ae;stroke-dasharray:10 3 2 3}.g4{stroke:#57606a;stroke-dasharray:1 2}
.gl{fill:none;stroke-width:1.6}
.spikebar{fill:#ffd8d6}
svg text.spikelabel{fill:#a40e26;font-weight:700}
.legend{font-size:13px;margin:2px 0 0;padding:0;list-style:none}
.legend li{display:inline-block;margin-right:16px}
.legend svg{display:inline-block;width:34px;height:10px;vertical-align:middle}
.flame rect{stroke:#fff;stroke-width:.5}
.flame text{font-size:11px;fill:#111;pointer-events:none}
.tabs button{font:inherit;padding:4px 12px;margin-right:4px;border:1px solid var(--line);background:var(--head);cursor:pointer}
.tabs button[aria-selected=true]{background:var(--bg);border-bottom-color:var(--bg);font-weight:600}
.js-only{display:none}
.js .js-only{display:inline-block}
#tip{position:absolute;pointer-events:none;background:#fff;border:1px solid var(--fg);padding:4px 8px;font-size:12.5px;display:none;white-space:nowrap;box-shadow:2px 2px 4px rgba(0,0,0,.15)}
.sel{fill:rgba(11,92,173,.15)}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 16px;font-size:14px}
dl.facts dt{color:var(--dim)}
dl.facts dd{margin:0}
@media print{
 body{max-width:none;padding:0;font-size:11pt}
 nav,.js-only,.tabs,#tip{display:none!important}
 .tabpanel{display:block!important}
 figure,table,.spikebox{break-inside:avoid}
 a{color:inherit;text-decoration:none}
}
`

// pageJS adds hover values and drag-to-zoom to the timelines and tabs to
// the flame graphs. Everything it touches is already drawn without it.
const pageJS = `
(function(){
document.documentElement.classList.add('js');
var dataEl=document.getElementById('tl-data');
var D=dataEl?JSON.parse(dataEl.textContent):null;
var tip=document.getElementById('tip');
function fmt(v){if(v==null||isNaN(v))return '-';return Math.round(v).toLocaleString('en-US');}
function clock(ms){var d=new Date(ms+D.off*1000);return d.toISOString().substr(11,8);}
var charts=[].slice.call(document.querySelectorAll('svg.chart'));
var lo=0,hi=D?D.t.length:0;
function view(a,b){lo=a;hi=b;charts.forEach(function(c){
 var p=c.querySelector('svg.plot');var vb=p.getAttribute('viewBox').split(' ');
 p.setAttribute('viewBox',a+' '+vb[1]+' '+(b-a)+' '+vb[3]);
 var labs=c.querySelectorAll('text.tx');for(var i=0;i<labs.length;i++){
  var k=Math.min(D.t.length-1,Math.floor(a+(b-a)*i/(labs.length-1)));labs[i].textContent=clock(D.t[k]);}
 var px=+p.getAttribute('x'),pw=+p.getAttribute('width');
 [].forEach.call(c.querySelectorAll('text.spikelabel'),function(l){var j=+l.getAttribute('data-i');
  l.style.display=(j>=a&&j<b)?'':'none';l.setAttribute('x',px+pw*(j-a)/(b-a)+2);});
});var r=document.getElementById('unzoom');if(r)r.style.display=(a>0||b<D.t.length)?'inline-block':'none';}
window.ctxtopZoom=function(a,b){view(Math.max(0,a-2),Math.min(D.t.length,b+3));
 var t=document.getElementById('timelines');if(t)t.scrollIntoView();};
var un=document.getElementById('unzoom');if(un)un.addEventListener('click',function(){view(0,D.t.length)});
charts.forEach(function(c){
 var p=c.querySelector('svg.plot');var sel=c.querySelector('rect.sel');var start=null;
 function idx(ev){var r=p.getBoundingClientRect();var f=(ev.clientX-r.left)/r.width;return Math.max(lo,Math.min(hi-1,Math.floor(lo+f*(hi-lo))));}
 p.addEventListener('mousemove',function(ev){if(!D)return;var i=idx(ev);
  var s=clock(D.t[i]);if(D.per>1)s+=' (highest of '+D.per+' intervals)';
  var html='<b>'+s+'</b>';for(var k in D.s){html+='<br>'+k+': '+fmt(D.s[k][i]);}
  for(var g=0;g<D.g.length;g++){var el=document.createElement('span');el.textContent=D.g[g].n;html+='<br>'+el.innerHTML+': '+fmt(D.g[g].v[i])+' cs/s';}
  if(D.spike[i])html+='<br><b>spike</b>';
  tip.innerHTML=html;tip.style.display='block';tip.style.left=(ev.pageX+14)+'px';tip.style.top=(ev.pageY+10)+'px';
  if(start!=null){var a=Math.min(start,i),b=Math.max(start,i)+1;sel.setAttribute('x',a);sel.setAttribute('width',b-a);}
 });
 p.addEventListener('mouseleave',function(){tip.style.display='none';});
 p.addEventListener('mousedown',function(ev){start=idx(ev);sel.setAttribute('x',start);sel.setAttribute('width',0);ev.preventDefault();});
 p.addEventListener('mouseup',function(ev){if(start==null)return;var i=idx(ev),a=Math.min(start,i),b=Math.max(start,i)+1;start=null;sel.setAttribute('width',0);if(b-a>=2)view(a,b);});
 p.addEventListener('dblclick',function(){view(0,D.t.length)});
});
[].slice.call(document.querySelectorAll('.tabset')).forEach(function(set){
 var panels=[].slice.call(set.querySelectorAll('.tabpanel'));if(panels.length<2)return;
 var bar=document.createElement('div');bar.className='tabs';bar.setAttribute('role','tablist');
 panels.forEach(function(p,i){var b=document.createElement('button');b.type='button';b.setAttribute('role','tab');
  b.textContent=p.getAttribute('data-tab');b.addEventListener('click',function(){show(i)});bar.appendChild(b);p.setAttribute('role','tabpanel');});
 set.insertBefore(bar,panels[0]);
 function show(k){panels.forEach(function(p,i){p.style.display=i==k?'block':'none';bar.children[i].setAttribute('aria-selected',i==k?'true':'false');});}
 show(0);
});
})();
`
