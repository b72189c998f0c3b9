const data = JSON.parse(document.getElementById('viz-data').textContent);
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
let cur = {g: -1, s: -1};
function show(g, s) {
  cur = {g, s};
  document.querySelectorAll('#groups li').forEach(li => {
    li.classList.toggle('sel', +li.dataset.g === g && +li.dataset.s === s);
  });
  const group = data.groups[g], step = group.steps[s];
  const head = document.getElementById('head');
  head.replaceChildren(el('h2', {id: 'step-title'}, group.label + ' / ' + step.name));
  head.appendChild(el('div', {class: 'n'}, step.input_nodes + ' nodes in, ' + step.output_nodes +
      ' nodes out, ' + step.events + ' rewrites' + (step.bottom_up ? ', bottom-up' : '') +
      (step.highlighted ? '; ' + step.highlighted + ' new nodes in red' : '')));
  const graph = document.getElementById('graph');
  graph.replaceChildren();
  if (step.svg >= 0) {
    graph.innerHTML = data.svgs[step.svg];
    graph.firstElementChild.setAttribute('id', 'step-graph');
  } else {
    graph.appendChild(el('p', {class: 'note', id: 'graph-note'}, step.note));
  }
  const rules = document.getElementById('rules');
  rules.replaceChildren();
  if (step.rewrites.length) {
    rules.appendChild(el('h2', {}, 'Rules that fired'));
    const t = el('table', {id: 'rule-table'});
    const h = el('tr');
    ['#', 'rule', 'matched', 'returned'].forEach(x => h.appendChild(el('td', {}, x)));
    t.appendChild(h);
    step.rewrites.forEach((r, i) => {
      const tr = el('tr');
      [String(i), r[0], r[1], r[2]].forEach(x => tr.appendChild(el('td', {}, x)));
      t.appendChild(tr);
    });
    rules.appendChild(t);
    if (step.events > step.rewrites.length) {
      rules.appendChild(el('p', {class: 'n'}, (step.events - step.rewrites.length) + ' more not listed'));
    }
  }
  const texts = document.getElementById('texts');
  texts.replaceChildren();
  group.texts.forEach(([title, text]) => {
    texts.appendChild(el('h2', {}, title));
    texts.appendChild(el('pre', {class: 'text'}, text));
  });
}
const list = document.getElementById('groups');
data.groups.forEach((group, g) => {
  list.appendChild(el('li', {class: 'group', 'data-g': g, 'data-s': -1}, group.label));
  list.lastChild.appendChild(el('span', {class: 'n'}, '  ' + group.steps.length + ' steps'));
  group.steps.forEach((step, s) => {
    const li = el('li', {class: 'step' + (step.events ? '' : ' none'), 'data-g': g, 'data-s': s},
                  step.name + ' ');
    li.appendChild(el('span', {class: 'n'}, '(' + step.events + ')'));
    // A rewrite made inside another is listed under it, indented by how deep it was made.
    if (step.depth > 0) li.style.paddingLeft = (22 + 14 * step.depth) + 'px';
    li.onclick = () => show(g, s);
    list.appendChild(li);
  });
});
if (data.default_group >= 0) show(data.default_group, data.default_step);
