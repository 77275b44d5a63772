-- k8s-sync: make the k8s holds those of P.holds ({gpu, claim_uid, user,
-- namespace, pod, mig}: mig a MIG device's uuid on its parent gpu),
-- claims in P.keep left as they are: release every other k8s hold (a
-- shared parent per claim: its last claim gone, it is freed), then take
-- each wanted GPU that is free, each MIG device whose parent is free or
-- shared and that no other claim has; anything else is a conflict, left
-- as it is.
return with_pool(function(n)
  queue_cleanup(n)
  local sts = cleanup(n)
  local keep, want, wantmig = set_of(P.keep), {}, {}
  for _, h in ipairs(P.holds) do
    local w = isnil(h.mig) and want or wantmig
    w[h.claim_uid] = w[h.claim_uid] or {}
    w[h.claim_uid][isnil(h.mig) and h.gpu or h.mig] = true
  end
  for i = 0, n - 1 do
    local st = sts[i]
    if shared(st) then
      if not P.keep_all then sts[i] = sync_shared(st, i, wantmig, keep) end
    elseif held(st) and st.type == 'k8s' and not P.keep_all and not keep[st.claim_uid or ''] and
        not (want[st.claim_uid or ''] and want[st.claim_uid][i]) then
      sts[i] = release(st)
    end
  end
  local out = {held = {}, conflicts = {}, range = {}}
  for k, h in ipairs(P.holds) do
    local st = sts[h.gpu]
    local c = PFX .. 'k8s:claim:' .. h.claim_uid
    if h.gpu < 0 or h.gpu >= n then
      out.range[#out.range + 1] = {i = k - 1, count = n}
    elseif not isnil(h.mig) and (st.free or shared(st)) then
      local owner = redis.call('GET', mkey(h.mig))
      if owner and owner ~= h.claim_uid then
        out.conflicts[#out.conflicts + 1] = {i = k - 1, holder = owner, holder_type = 'k8s',
          since = claim_since(owner, h.gpu), bad = NULL}
      else
        local new
        st, new = take_mig(st, h.claim_uid, h.gpu, h.mig, h.namespace, h.pod)
        sts[h.gpu] = st
        if new then
          local inf = mig_info(h.claim_uid, h.gpu, h.mig)
          inf.i = k - 1
          out.held[#out.held + 1] = inf
        end
      end
    elseif not isnil(h.mig) then
      out.conflicts[#out.conflicts + 1] = {i = k - 1, holder = st.user or NULL,
        holder_type = st.bad and 'error' or st.type,
        since = st.start_time and st.start_time[1] or NULL, bad = st.bad or NULL}
    elseif st.free then
      redis.call('SET', gkey(h.gpu), fresh(h.user, 'k8s', 'k8s', nil, nil, h.claim_uid))
      redis.call('SADD', c .. ':gpus', int(h.gpu))
      local ri = '{"claim_uid":' .. js(h.claim_uid) .. ',"namespace":' .. js(h.namespace)
      if not isnil(h.pod) then ri = ri .. ',"pod_name":' .. js(h.pod) end
      redis.call('SET', c .. ':gpu:' .. int(h.gpu), ri .. ',"reserved_at":' .. js(NOWSTR) .. '}')
      st = {id = h.gpu, user = h.user, actual_user = 'k8s', type = 'k8s',
        claim_uid = h.claim_uid, start_time = {NOW, 0}}
      sts[h.gpu] = st
      local inf = info(st)
      inf.i = k - 1
      out.held[#out.held + 1] = inf
    elseif not st.bad and st.type == 'k8s' and st.claim_uid == h.claim_uid then
      redis.call('SADD', c .. ':gpus', int(h.gpu))
    else
      out.conflicts[#out.conflicts + 1] = {i = k - 1, holder = st.user or NULL,
        holder_type = st.bad and 'error' or st.type,
        since = st.start_time and st.start_time[1] or NULL, bad = st.bad or NULL}
    end
  end
  return result(out)
end)
