-- k8s_prepare: the holds of claim P.claim_uid (P.user, P.namespace,
-- P.pod): whole GPUs P.gpus, MIG devices P.mig ({gpu, uuid}), all or
-- nothing. ok = their infos (nothing written for what the claim holds
-- already); else conflicts = every hold someone else has, nothing
-- written. Never queued; stale host reservations are cleaned first.
return with_pool(function(n)
  local uid, whole = P.claim_uid, {}
  for _, g in ipairs(P.gpus) do
    if g < 0 or g >= n then return result({error = 'range', gpu = g, count = n}) end
    whole[g] = true
  end
  for _, m in ipairs(P.mig) do
    if m.gpu < 0 or m.gpu >= n then return result({error = 'range', gpu = m.gpu, count = n}) end
    if whole[m.gpu] then return result({error = 'mixed', gpu = m.gpu}) end
  end
  queue_cleanup(n)
  local sts = cleanup(n)
  local conflicts = {}
  local function conflict(g, uuid, st)
    conflicts[#conflicts + 1] = {gpu = g, mig = uuid or NULL, holder = st.user or NULL,
      holder_type = st.bad and 'error' or st.type, claim_uid = st.claim_uid or NULL,
      since = st.start_time and st.start_time[1] or NULL, bad = st.bad or NULL}
  end
  for _, g in ipairs(P.gpus) do
    local st = sts[g]
    if not st.free and not (held(st) and st.type == 'k8s' and st.claim_uid == uid) then
      conflict(g, nil, st)
    end
  end
  for _, m in ipairs(P.mig) do
    local st = sts[m.gpu]
    if st.free or shared(st) then
      local owner = redis.call('GET', mkey(m.uuid))
      if owner and owner ~= uid then
        conflicts[#conflicts + 1] = {gpu = m.gpu, mig = m.uuid, holder = owner,
          holder_type = 'k8s', claim_uid = owner, since = claim_since(owner, m.gpu), bad = NULL}
      end
    else
      conflict(m.gpu, m.uuid, st)
    end
  end
  if #conflicts > 0 then return result({conflicts = conflicts}) end
  local infos = {}
  for _, g in ipairs(P.gpus) do
    local st, taken = sts[g], false
    if st.free then
      taken = true
      redis.call('SET', gkey(g), fresh(P.user, 'k8s', 'k8s', nil, nil, uid))
      st = {id = g, user = P.user, actual_user = 'k8s', type = 'k8s', claim_uid = uid,
        start_time = {NOW, 0}}
      sts[g] = st
    end
    claim_info(uid, g, P.namespace, P.pod, taken)
    infos[#infos + 1] = info(st)
  end
  for _, m in ipairs(P.mig) do
    sts[m.gpu] = take_mig(sts[m.gpu], uid, m.gpu, m.uuid, P.namespace, P.pod)
    infos[#infos + 1] = mig_info(uid, m.gpu, m.uuid)
  end
  return result({ok = infos})
end)
