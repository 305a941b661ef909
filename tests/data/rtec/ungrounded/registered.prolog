initiatedAt(open(D)=true, T) :- happensAt(open_door(D), T).
terminatedAt(open(D)=true, T) :- happensAt(close_door(D), T).

holdsFor(shut(D)=true, I) :-
    holdsFor(open(D)=true, I1),
    complement_all([I1], I).

initiatedAt(noted(D)=true, T) :- happensAt(ping(D), T), holdsAt(shut(D)=true, T).
terminatedAt(noted(D)=true, T) :- happensAt(unping(D), T).

happensAt(beep(D), T) :- happensAt(ping(D), T), holdsAt(shut(D)=true, T).
initiatedAt(beeped(D)=true, T) :- happensAt(beep(D), T).

dynamicDomain(door(_)).
dynamicDomain(pinger(_)).
grounding(register(D)) :- door(D).
grounding(open_door(D)) :- door(D).
grounding(close_door(D)) :- door(D).
grounding(ping(D)) :- pinger(D).
grounding(unping(D)) :- pinger(D).
grounding(open(D)=true) :- door(D).
grounding(shut(D)=true) :- door(D).
grounding(noted(D)=true) :- pinger(D).
grounding(beep(D)) :- pinger(D).
grounding(beeped(D)=true) :- pinger(D).
